/**
 * What `weft logs` does once its command line is parsed: logs.ts, its definition,
 * imports this module only then, so that `weft logs --help` loads none of it.
 */

import { parseDecimal } from "../../util/decimal.ts";
import { beyondExactIntegers, EXACT_INTEGER_BOUND } from "../../util/exactInteger.ts";
import type { LogRecord } from "../../util/logRecords.ts";
import { inTimeOrder } from "../../util/timeOrder.ts";
import type { ConnectCliOptions } from "./connectOptions.ts";
import { type CliContext, EXIT } from "./context.ts";
import { sayingItWaits } from "./waitNotice.ts";
import { withClient } from "./withClient.ts";
import {
  noWorkerMatches,
  unmatchedWorkers,
  WORKER_SELECTOR,
  withSchemes,
} from "./workerSelectors.ts";

/** Options of `weft logs`. */
export interface LogsCliOptions extends ConnectCliOptions {
  readonly n?: string;
  /** `--worker WORKER` (repeatable): only these workers' logs (see {@link WORKER_SELECTOR}). */
  readonly worker?: readonly string[];
  /** False with `--no-scheduler`. */
  readonly scheduler?: boolean;
  /** False with `--no-workers`. */
  readonly workers?: boolean;
  readonly level?: string;
  readonly json?: boolean;
}

/** pino's levels, least severe first. */
const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;

/** What `weft logs --json` prints. */
export interface ClusterLogs {
  readonly scheduler?: readonly LogRecord[];
  readonly workers?: Readonly<Record<string, readonly LogRecord[]>>;
}

/** One record as a line: time, level, process, logger name, message, its fields (`key=value`), error. */
export function formatLogLine(process: string, r: LogRecord): string {
  const time = new Date(r.time).toISOString();
  const name = r.name === undefined ? "" : ` ${r.name}`;
  const fields = Object.entries(r.fields ?? {})
    .map(([k, v]) => ` ${k}=${fieldText(v)}`)
    .join("");
  const err = r.err === undefined ? "" : ` (${r.err})`;
  return `${time} ${r.level.toUpperCase().padEnd(5)} ${process}${name}: ${r.msg}${fields}${err}`;
}

/** A field's value in a line: as it is if it is one word, else as a JSON string. */
function fieldText(v: unknown): string {
  const s = String(v);
  return typeof v === "string" && (s === "" || /[\s"'()=]/.test(s)) ? JSON.stringify(s) : s;
}

/** The records of every process, oldest first (a process's own order kept for equal times). */
export function mergedLines(logs: ClusterLogs): string[] {
  const all: { process: string; r: LogRecord }[] = [];
  for (const r of logs.scheduler ?? []) all.push({ process: "scheduler", r });
  for (const [address, records] of Object.entries(logs.workers ?? {})) {
    for (const r of records) all.push({ process: address, r });
  }
  return inTimeOrder(all, (x) => x.r.time).map(({ process, r }) => formatLogLine(process, r));
}

function parseCount(given: string | undefined): number | string {
  if (given === undefined) return 100;
  if (given === "all") return Number.POSITIVE_INFINITY;
  // In decimal, as every numeric option reads (`1e3` too, which digits alone refused).
  const n = parseDecimal(given);
  if (beyondExactIntegers(n)) {
    return `--n must be ${EXACT_INTEGER_BOUND} or "all", got ${JSON.stringify(given)}`;
  }
  return Number.isSafeInteger(n) && n >= 0
    ? n
    : `--n must be an integer >= 0 or "all", got ${JSON.stringify(given)}`;
}

/** `weft logs [ADDRESS]` (the address, or `--scheduler-file`). */
export async function runLogs(
  address: string | undefined,
  opts: LogsCliOptions,
  ctx: CliContext,
): Promise<void> {
  const n = parseCount(opts.n);
  const level = opts.level ?? "trace";
  const problem =
    typeof n === "string"
      ? n
      : !(LEVELS as readonly string[]).includes(level)
        ? `--level must be one of ${LEVELS.join(", ")}, got ${JSON.stringify(level)}`
        : opts.scheduler === false && opts.workers === false
          ? "--no-scheduler and --no-workers leave nothing to show"
          : null;
  if (problem !== null) {
    ctx.stderr.write(`weft logs: ${problem}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  const atLeast = LEVELS.indexOf(level as (typeof LEVELS)[number]);
  const last = n as number;
  // With --level, --n counts the records of that level or more severe: the processes
  // are asked for every record they keep, else `--level warn` showed only the warnings
  // among the last 100 records, and none of those that debug or info lines had followed.
  const count = atLeast === 0 && Number.isFinite(last) ? { n: last } : {};
  const shown = (records: LogRecord[]): LogRecord[] => {
    const kept =
      atLeast === 0
        ? records
        : records.filter((r) => LEVELS.indexOf(r.level as (typeof LEVELS)[number]) >= atLeast);
    return Number.isFinite(last) ? kept.slice(Math.max(0, kept.length - last)) : kept;
  };
  await withClient("logs", { given: address }, opts, ctx, async (client) => {
    const logs: { scheduler?: LogRecord[]; workers?: Record<string, LogRecord[]> } = {};
    if (opts.scheduler !== false) logs.scheduler = shown(await client.getSchedulerLogs(count));
    if (opts.workers !== false) {
      const given = await withSchemes(client, opts.worker ?? []);
      // As retire and restart do: a --worker naming no worker (a typo, one gone) must
      // not look like a worker that logged nothing.
      const unmatched = await unmatchedWorkers(client, given);
      for (const selector of unmatched) {
        ctx.stderr.write(`${noWorkerMatches("logs", selector, client.address)}\n`);
        ctx.exitCode = EXIT.differences;
      }
      // Said above; the others' records are printed all the same.
      const matched = given.filter((selector) => !unmatched.includes(selector));
      const byWorker =
        given.length > 0 && matched.length === 0
          ? {}
          : await sayingItWaits(ctx, "logs", "the workers' logs", () =>
              client.getWorkerLogs({ ...count, ...(given.length > 0 ? { workers: matched } : {}) }),
            );
      logs.workers = {};
      for (const [worker, records] of Object.entries(byWorker)) {
        logs.workers[worker] = shown(records);
      }
    }
    if (opts.json === true) {
      ctx.stdout.write(`${JSON.stringify(logs, null, 2)}\n`);
      return;
    }
    for (const line of mergedLines(logs)) ctx.stdout.write(`${line}\n`);
  });
}
