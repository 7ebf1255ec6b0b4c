/**
 * `weft logs <scheduler>`: the last records the scheduler and its workers
 * logged (Dask's `get_scheduler_logs` and `get_worker_logs`), merged by time:
 * what went wrong where, without a shell on each machine. JSON with `--json`.
 */

import { Command } from "commander";
import type { LogRecord } from "../../util/logRecords.ts";
import { inTimeOrder } from "../../util/timeOrder.ts";
import {
  addConnectOptions,
  addSchedulerArgument,
  type ConnectCliOptions,
} from "./connectOptions.ts";
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
  const n = Number(given);
  return /^\d+$/.test(given) && Number.isSafeInteger(n)
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

/** `weft logs`: see docs/client.md. */
export function logsCommand(ctx: CliContext): Command {
  return addConnectOptions(addSchedulerArgument(new Command("logs")))
    .description(
      "Print the last records the scheduler and its workers logged, merged by time (Dask's get_worker_logs)",
    )
    .option(
      "--n <n>",
      'the last n records of each process (of --level or more severe), or "all" it keeps',
      "100",
    )
    .option(
      "--worker <worker>",
      `only this worker's records: ${WORKER_SELECTOR}; repeatable`,
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--no-scheduler", "leave out the scheduler's records")
    .option("--no-workers", "leave out the workers' records")
    .option("--level <level>", "only records of this level or more severe (trace … fatal)")
    .option("--json", "print {scheduler: [records], workers: {address: [records]}} as JSON")
    .addHelpText(
      "after",
      "\nEach process keeps its last 10,000 records (the scheduler's and the worker's\n" +
        "logLength), at the levels its logger writes (for weft scheduler and weft worker,\n" +
        "their --log-level, info by default), whether its stderr goes to a terminal, a file\n" +
        "or nowhere. A line is `TIME LEVEL PROCESS LOGGER: MESSAGE KEY=VALUE... (ERROR)`, the\n" +
        "process `scheduler` or a worker's address, KEY=VALUE the context logged with it\n" +
        "(the task's key, the worker or peer, the reason). Exit code: 0; 1 if a worker's records could not\n" +
        "be read, or a --worker matches no connected worker (the others' records are\n" +
        "printed); 2 for bad usage or a scheduler that cannot be reached.",
    )
    .action(async (address: string | undefined, opts: LogsCliOptions) => {
      await runLogs(address, opts, ctx);
    });
}
