import type { ClusterDump } from "../protocol/clusterDump.ts";
import { loadClusterDump } from "../protocol/clusterDump.ts";
import { unawaitedCallback } from "../util/unawaitedCallback.ts";
import type { WorkerState } from "../worker/state/workerState.ts";
import { askedAddress, checkFileArgument, toInputError } from "./errors.ts";
import { workersWithoutEntry } from "./missingWorkers.ts";
import { replayWorker } from "./replayWorker.ts";
import type { DumpReplayReport } from "./report.ts";

/** Options of {@link replayDump}. */
export interface ReplayDumpOptions {
  /** See {@link ReplayWorkerOptions.followLog}. */
  readonly followLog?: boolean;
  /** Only these workers (addresses); all by default. */
  readonly workers?: readonly string[];
  /** Progress: events replayed so far, of `total` (every selected worker's stimulus log). */
  readonly onProgress?: (done: number, total: number) => void;
}

/** A replayed dump: the report and each worker's state machine as the replay left it. */
export interface DumpReplay {
  /** What the replay found. */
  readonly report: DumpReplayReport;
  /** Each worker's state machine as the replay left it, by address. */
  readonly states: ReadonlyMap<string, WorkerState>;
}

/** Loads a cluster dump; every failure is a ReplayInputError naming the file. */
export async function loadDump(file: string): Promise<ClusterDump> {
  checkFileArgument("loadDump", file);
  try {
    return await loadClusterDump(file);
  } catch (err) {
    throw toInputError(file, err);
  }
}

/**
 * The dump's address of the worker asked for as `asked`: itself when the dump has
 * it, else, for an address given without its scheme (`127.0.0.1:37641`, as a log
 * line shows it), the one address of the dump that has it after its scheme
 * (`tcp://127.0.0.1:37641`); `asked` again when none or several do, for the caller
 * to say the dump has no such worker.
 */
function dumpedAddress(dump: ClusterDump, asked: string): string {
  const known = [...dump.workers.keys(), ...dump.unavailableWorkers.keys()];
  if (known.includes(asked) || asked.includes("://")) return asked;
  const matches = known.filter((k) => k.slice(k.indexOf("://") + 3) === asked);
  return matches.length === 1 ? matches[0] : asked;
}

/**
 * Replays every worker of a loaded dump (see {@link replayWorker}). Throws
 * ReplayInputError for an unknown worker in `options.workers`, an empty
 * `options.workers`, or an undecodable event.
 */
export function replayLoadedDump(dump: ClusterDump, options: ReplayDumpOptions = {}): DumpReplay {
  // A worker named twice is replayed once: `states` has one entry per address, and
  // the report would otherwise list it (and count it) twice.
  const addresses = [
    ...new Set(options.workers?.map((a) => dumpedAddress(dump, a)) ?? dump.workers.keys()),
  ];
  // As for a dump without workers: a replay of none would pass having checked nothing.
  if (options.workers !== undefined && addresses.length === 0) {
    const known = [...dump.workers.keys()].join(", ") || "none";
    throw toInputError(
      dump.file,
      new Error(`no worker to replay: the list of workers is empty (workers: ${known})`),
    );
  }
  for (const a of addresses) {
    if (!dump.workers.has(a)) {
      const known = [...dump.workers.keys()].join(", ") || "none";
      // A worker that did not answer the dump is listed with its error, not its state:
      // say so rather than that the dump does not know it.
      const reason = dump.unavailableWorkers.get(a);
      const why =
        reason === undefined
          ? `no worker ${askedAddress(a)} in the dump`
          : `worker ${askedAddress(a)} cannot be replayed: it did not answer the dump (${reason})`;
      throw toInputError(dump.file, new Error(`${why} (workers: ${known})`));
    }
  }
  let total = 0;
  for (const a of addresses) total += dump.workers.get(a)?.stimulusLog.length ?? 0;
  let done = 0;
  const onProgress =
    options.onProgress && unawaitedCallback(options.onProgress, "replayDump: onProgress");
  const onEvent = onProgress === undefined ? undefined : () => onProgress(++done, total);
  onProgress?.(0, total);
  const states = new Map<string, WorkerState>();
  const workers = addresses.map((address) => {
    const before = done;
    const { report, state } = replayWorker(dump, address, {
      followLog: options.followLog,
      onEvent,
    });
    states.set(address, state);
    // Events not replayed (skipped, or after a failure) still count as processed.
    done = before + report.events.inLog;
    onProgress?.(done, total);
    return report;
  });
  const report: DumpReplayReport = {
    kind: "dump",
    file: dump.file,
    encoding: dump.encoding,
    distributed: dump.versions.distributed,
    workers,
    unavailableWorkers: [...dump.unavailableWorkers].map(([address, reason]) => ({
      address,
      reason,
    })),
    workersWithoutEntry: workersWithoutEntry(dump),
    ok: workers.every((w) => w.ok),
  };
  return { report, states };
}

/**
 * Loads and replays a cluster dump file. Throws ReplayInputError, besides what
 * {@link loadDump} and {@link replayLoadedDump} throw, for a dump with no worker to
 * replay (none answered it, or the cluster had none): a replay of nothing would pass.
 */
export async function replayDump(
  file: string,
  options: ReplayDumpOptions = {},
): Promise<DumpReplay> {
  const dump = await loadDump(file);
  if (dump.workers.size === 0) {
    const gone = [...dump.unavailableWorkers].map(([a, reason]) => `${a}: ${reason}`);
    const why =
      gone.length === 0 ? "the dump holds none" : `none answered the dump (${gone.join("; ")})`;
    throw toInputError(file, new Error(`no worker to replay: ${why}`));
  }
  return replayLoadedDump(dump, options);
}
