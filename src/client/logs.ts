/**
 * Reading the recent logs of the cluster's processes (Dask's
 * `Client.get_worker_logs` and `get_scheduler_logs`): each keeps the last
 * records it logged (its `logLength`, 10,000 by default), whatever its
 * logger's destination, at the levels its logger lets through.
 */

import type { LogRecord } from "../util/logRecords.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { callEachWorker } from "./askWorkers.ts";

/** Options of `Client.getWorkerLogs` and `getSchedulerLogs`. */
export interface LogsOptions {
  /** The last `n` records of each process. Default (or null): all it keeps. */
  readonly n?: number | null;
}

/** Options of `Client.getWorkerLogs`. */
export interface WorkerLogsOptions extends LogsOptions {
  /** Only these workers (addresses, or hosts for every worker there). Default (or null): every worker. */
  readonly workers?: string | readonly string[] | null;
}

/** Whether `v` is an array of log records, as a worker answers `get_logs`. */
function isLogRecords(v: unknown): v is LogRecord[] {
  return (
    Array.isArray(v) &&
    v.every(
      (r) =>
        typeof r === "object" &&
        r !== null &&
        typeof (r as LogRecord).time === "number" &&
        typeof (r as LogRecord).level === "string" &&
        typeof (r as LogRecord).msg === "string",
    )
  );
}

/** The log records of each of `addresses`, in address order; rejects naming the first worker that failed. */
export async function logsOfWorkers(
  peers: PeerPool,
  addresses: readonly string[],
  n: number | undefined,
  who: string,
): Promise<Record<string, LogRecord[]>> {
  return callEachWorker(
    peers,
    addresses,
    { op: "getWorkerLogs", method: "get_logs", args: n === undefined ? {} : { n }, who },
    { noun: "logs", expected: "no log records" },
    (got) => (isLogRecords(got) ? got : null),
  );
}
