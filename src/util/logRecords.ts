/**
 * The recent log of a process, kept in memory for clients to read (Dask's
 * `DequeHandler` behind `Client.get_worker_logs` and `get_scheduler_logs`):
 * the last `length` records its logger wrote, whatever its destination.
 *
 * The logger is wrapped rather than given a second destination, so that a
 * logger the user made (any pino logger, a silent one included) is recorded
 * as it is: what its level lets through, children included.
 */

import { format } from "node:util";
import type { Logger } from "pino";
import { BoundedDeque } from "./boundedDeque.ts";
import { cutText } from "./cutText.ts";
import { readableErrorFields, readSafely } from "./readSafely.ts";

/** One record of a process's log. */
export interface LogRecord {
  /** Wall-clock milliseconds (`Date.now()`) when it was written. */
  readonly time: number;
  /** pino's level label: `"trace"`, `"debug"`, `"info"`, `"warn"`, `"error"`, `"fatal"`. */
  readonly level: string;
  /** The message, cut to {@link MAX_MESSAGE_CHARS} characters. */
  readonly msg: string;
  /** The logger's `name` (`weft.worker`, a child's own), when it has one. */
  readonly name?: string;
  /** `"Name: message"` of the error logged with it (pino's `err` field), if any, cut as `msg` is. */
  readonly err?: string;
  /**
   * The context logged with it (pino's merge object: the task's `key`, the
   * `worker`, `peer` or `reason` the message is about), its fields of a plain
   * value only (strings cut to {@link MAX_FIELD_CHARS} characters, bigints as
   * strings), if any: without them "could not run task" or "refused a worker"
   * does not say which, nor why.
   */
  readonly fields?: Readonly<Record<string, string | number | boolean | null>>;
}

/** The longest string field kept in a record; longer ones are cut, ending in "…". */
export const MAX_FIELD_CHARS = 1000;

/**
 * The longest message (and error) kept in a record; longer ones are cut, ending
 * in "…". A message quoting a huge value would otherwise be held, up to `length`
 * times over, and sent whole to every client reading the logs.
 */
export const MAX_MESSAGE_CHARS = 10_000;

/** `text` cut to `max` characters, ending in "…" if it was. */
function cut(text: string, max: number): string {
  return cutText(text, max - 1);
}

const LEVELS: ReadonlySet<string> = new Set(["trace", "debug", "info", "warn", "error", "fatal"]);

/** The last records a logger wrote. */
export class LogRecords {
  private readonly records: BoundedDeque<LogRecord>;

  /** @param length How many records to keep (0: none). */
  constructor(length: number) {
    this.records = new BoundedDeque(length);
  }

  /** The last `n` records (all kept, without `n`), oldest first. */
  recent(n?: number): LogRecord[] {
    const all = [...this.records];
    return n === undefined ? all : all.slice(Math.max(0, all.length - n));
  }

  /**
   * `logger`, recording here what it writes (and what its children write).
   * A logger that keeps nothing (length 0) is returned as it is.
   */
  wrap(logger: Logger): Logger {
    if (this.records.maxlen === 0) return logger;
    return this.wrapWithName(logger, nameOf(logger));
  }

  private wrapWithName(logger: Logger, name: string | undefined): Logger {
    // Each method handed out, with the function it calls: pino replaces its level methods
    // as its level changes, and one kept from before wrote nothing at a level enabled since.
    const methods = new Map<PropertyKey, { readonly of: unknown; readonly method: unknown }>();
    return new Proxy(logger, {
      get: (target, prop) => {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        const cached = methods.get(prop);
        if (cached !== undefined && cached.of === value) return cached.method;
        let method: unknown;
        if (typeof prop === "string" && LEVELS.has(prop)) {
          method = (...args: unknown[]) => {
            if (target.isLevelEnabled(prop)) this.recordSafely(prop, name, args);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        } else if (prop === "child") {
          method = (bindings: Record<string, unknown>, ...rest: unknown[]) => {
            const child = (value as (...a: unknown[]) => Logger).call(target, bindings, ...rest);
            const childName = typeof bindings?.name === "string" ? bindings.name : name;
            return this.wrapWithName(child, childName);
          };
        } else {
          method = (value as (...a: unknown[]) => unknown).bind(target);
        }
        methods.set(prop, { of: value, method });
        return method;
      },
    });
  }

  /**
   * {@link record}, or a record saying why what was logged could not be read (a
   * Proxy whose getters throw): thrown, it reached the caller, whose log line
   * then never got written either.
   */
  private recordSafely(level: string, name: string | undefined, args: readonly unknown[]): void {
    try {
      this.record(level, name, args);
    } catch (err) {
      const why = readableErrorFields(err);
      this.records.push({
        time: Date.now(),
        level,
        msg: cut(`a record that could not be read: ${why.name}: ${why.message}`, MAX_MESSAGE_CHARS),
        ...(name !== undefined ? { name } : {}),
      });
    }
  }

  private record(level: string, name: string | undefined, args: readonly unknown[]): void {
    let msg: string;
    let err: string | undefined;
    let fields: Record<string, string | number | boolean | null> | undefined;
    const first = args[0];
    if (typeof first === "object" && first !== null) {
      // pino's (object, message, ...interpolation) form; an Error alone is its own message.
      const rest = args.slice(1);
      msg = rest.length > 0 ? format(...rest) : "";
      const alone = isError(first);
      const e = alone ? first : (first as { err?: unknown }).err;
      if (isError(e)) {
        // Read safely: a task's thrown value may be a Proxy whose getters throw.
        const { name: errName, message } = readableErrorFields(e);
        err = `${errName}: ${message}`;
        if (msg === "") msg = message;
      }
      if (!alone) fields = plainFields(first as Record<string, unknown>);
    } else {
      msg = format(...args);
    }
    this.records.push({
      time: Date.now(),
      level,
      msg: cut(msg, MAX_MESSAGE_CHARS),
      ...(name !== undefined ? { name } : {}),
      ...(err !== undefined ? { err: cut(err, MAX_MESSAGE_CHARS) } : {}),
      ...(fields !== undefined ? { fields } : {}),
    });
  }
}

/** The fields of a merge object holding a plain value (not `err`), or undefined if none does. */
function plainFields(
  merge: Record<string, unknown>,
): Record<string, string | number | boolean | null> | undefined {
  let fields: Record<string, string | number | boolean | null> | undefined;
  for (const [k, v] of Object.entries(merge)) {
    if (k === "err") continue;
    let kept: string | number | boolean | null;
    if (typeof v === "string") {
      kept = cut(v, MAX_FIELD_CHARS);
    } else if (typeof v === "number" || typeof v === "boolean" || v === null) kept = v;
    else if (typeof v === "bigint") kept = String(v);
    else continue;
    fields ??= {};
    fields[k] = kept;
  }
  return fields;
}

/** Whether `v` is an Error; false when even that cannot be told (a Proxy's trap throws). */
function isError(v: unknown): boolean {
  return readSafely(
    () => v instanceof Error,
    () => false,
  );
}

/** The `name` a pino logger was made with, if any. */
function nameOf(logger: Logger): string | undefined {
  try {
    const bindings = logger.bindings();
    return typeof bindings.name === "string" ? bindings.name : undefined;
  } catch {
    return undefined;
  }
}

/** Why `n` is not a count of records to read, or null. */
export function logCountProblem(n: unknown): string | null {
  if (n === undefined) return null;
  return Number.isSafeInteger(n) && (n as number) >= 0 ? null : "n must be an integer ≥ 0";
}
