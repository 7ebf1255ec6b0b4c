/**
 * Reading the recent logs of the cluster's processes (Dask's
 * `Client.get_worker_logs` and `get_scheduler_logs`): each keeps the last
 * records it logged (its `logLength`, 10,000 by default), whatever its
 * logger's destination, at the levels its logger lets through.
 */

import type { LogRecord } from "../util/logRecords.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { askEachWorker } from "./askWorkers.ts";

/** Options of `Client.getWorkerLogs` and `getSchedulerLogs`. */
export interface LogsOptions {
  /** The last `n` records of each process. Default: all it keeps. */
  readonly n?: number;
}

/** Options of `Client.getWorkerLogs`. */
export interface WorkerLogsOptions extends LogsOptions {
  /** Only these workers (addresses, or hosts for every worker there). Default: every worker. */
  readonly workers?: string | readonly string[];
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
): Promise<Record<string, LogRecord[]>> {
  const answers = await askEachWorker(
    addresses,
    async (address): Promise<LogRecord[] | Error> => {
      try {
        const rpc = await peers.get(address);
        const got = await rpc.call("get_logs", n === undefined ? {} : { n });
        if (isLogRecords(got)) return got;
        return new Error(`getWorkerLogs: ${address} answered get_logs with no log records`);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        return new Error(`getWorkerLogs: cannot read the logs of ${address}: ${why}`, {
          cause: err,
        });
      }
    },
    (answer) => (answer instanceof Error ? answer : null),
  );
  return answers as Record<string, LogRecord[]>;
}
