/** A worker's dumped Dask configuration, read the way `dask.config.get` reads it. */

import { parseBytes } from "../../util/parseBytes.ts";
import { Ctx, child, type DumpFormatError, describe, type PathNode } from "./errors.ts";
import type { DumpObject, DumpValue } from "./values.ts";
import { isDumpObject } from "./values.ts";

/** `dask.config.canonical_name`: `k`, or its `-`/`_` variant when only that exists. */
function canonicalName(k: string, config: DumpObject): string {
  if (Object.hasOwn(config, k)) return k;
  const alt = k.includes("_") ? k.replaceAll("_", "-") : k.replaceAll("-", "_");
  return Object.hasOwn(config, alt) ? alt : k;
}

/**
 * A worker's dumped Dask configuration (`dask.config.config`), read the way
 * `dask.config.get` reads it (dotted keys, `-` and `_` interchangeable). The
 * typed getters throw {@link DumpFormatError} naming the config path when a
 * value is missing or of the wrong type.
 */
export class DaskConfig {
  /** The normalized configuration mapping. */
  readonly raw: DumpObject;
  readonly #ctx: Ctx;
  readonly #path: PathNode | null;

  /** Wraps a config mapping; `file` and `path` locate it in error messages. */
  constructor(raw: DumpObject, file = "<config>", path: string | null = null) {
    this.raw = raw;
    this.#ctx = new Ctx(file);
    this.#path = path === null ? null : child(null, { rendered: path });
  }

  #pathOf(key: string): PathNode | null {
    let p = this.#path;
    for (const part of key.split(".")) p = child(p, part);
    return p;
  }

  /** `dask.config.get(key)`, or undefined when the key is absent. */
  get(key: string): DumpValue | undefined {
    let cur: DumpValue = this.raw;
    for (const part of key.split(".")) {
      if (!isDumpObject(cur)) return undefined;
      const name = canonicalName(part, cur);
      if (!Object.hasOwn(cur, name)) return undefined;
      cur = cur[name];
    }
    return cur;
  }

  /** Whether `key` is set. */
  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** A required number (`inf` reads as Infinity). */
  number(key: string): number {
    return this.#ctx.number(this.get(key), this.#pathOf(key));
  }

  /** A required boolean. */
  boolean(key: string): boolean {
    const v = this.get(key);
    if (typeof v === "boolean") return v;
    return this.#ctx.fail(
      this.#pathOf(key),
      v === undefined ? "missing (expected a boolean)" : `expected a boolean, got ${describe(v)}`,
    );
  }

  /** A required string. */
  string(key: string): string {
    return this.#ctx.string(this.get(key), this.#pathOf(key));
  }

  /** A required fraction that may be `false` (disabled), as the memory thresholds are. */
  fractionOrFalse(key: string): number | false {
    const v = this.get(key);
    if (v === false || typeof v === "number") return v;
    return this.#ctx.fail(
      this.#pathOf(key),
      v === undefined
        ? "missing (expected a number or false)"
        : `expected a number or false, got ${describe(v)}`,
    );
  }

  /** A required byte size: `dask.utils.parse_bytes` of a number or a string such as `"50MB"`. */
  bytes(key: string): number {
    const v = this.get(key);
    const path = this.#pathOf(key);
    if (typeof v !== "number" && typeof v !== "string") {
      return this.#ctx.fail(
        path,
        v === undefined
          ? "missing (expected a byte size)"
          : `expected a byte size, got ${describe(v)}`,
      );
    }
    try {
      return parseBytes(v);
    } catch (e) {
      return this.#ctx.fail(
        path,
        `not a byte size: ${e instanceof Error ? e.message : String(e)}`,
        e,
      );
    }
  }

  /** `distributed.worker.transfer.message-bytes-limit`, parsed (the WorkerState's `transfer_message_bytes_limit`). */
  transferMessageBytesLimit(): number {
    return this.bytes("distributed.worker.transfer.message-bytes-limit");
  }

  /** `distributed.worker.connections.incoming`: how many peers may fetch from this worker at once (`Worker.transfer_outgoing_count_limit`). */
  connectionsIncoming(): number {
    return this.number("distributed.worker.connections.incoming");
  }

  /** `distributed.worker.connections.outgoing`: how many peers this worker fetches from at once (the WorkerState's `transfer_incoming_count_limit`). */
  connectionsOutgoing(): number {
    return this.number("distributed.worker.connections.outgoing");
  }

  /** `distributed.worker.memory.transfer`: share of the memory limit that incoming transfers may take, or false. */
  memoryTransferFraction(): number | false {
    return this.fractionOrFalse("distributed.worker.memory.transfer");
  }

  /** `distributed.worker.memory.target`. */
  memoryTargetFraction(): number | false {
    return this.fractionOrFalse("distributed.worker.memory.target");
  }

  /** `distributed.worker.memory.spill`. */
  memorySpillFraction(): number | false {
    return this.fractionOrFalse("distributed.worker.memory.spill");
  }

  /** `distributed.worker.memory.pause`. */
  memoryPauseFraction(): number | false {
    return this.fractionOrFalse("distributed.worker.memory.pause");
  }

  /** `distributed.worker.resources` (`{}` when absent): a Worker's resources when none are passed to it. */
  workerResources(): Record<string, number> {
    const key = "distributed.worker.resources";
    const v = this.get(key);
    if (v === undefined || v === null) return {};
    const path = this.#pathOf(key);
    const out: Record<string, number> = {};
    for (const [r, n] of Object.entries(this.#ctx.object(v, path)))
      out[r] = this.#ctx.number(n, child(path, r));
    return out;
  }

  /** `distributed.worker.validate` (false when absent, Dask's default). */
  workerValidate(): boolean {
    return this.has("distributed.worker.validate")
      ? this.boolean("distributed.worker.validate")
      : false;
  }
}
