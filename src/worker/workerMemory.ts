/**
 * What a worker's memory options (`memoryLimit`, `memoryTarget`, the
 * `memorySpill`, `memoryPause` and `memoryTerminate` thresholds,
 * `memoryMeasure`) make of it: the data store that spills values to disk, the
 * monitor that measures and acts, and the refusal to start beyond a threshold
 * already.
 *
 * Apart from the worker because it is the one place those options are read;
 * `SpillStore` and `MemoryMonitor` know nothing of them.
 */

import { mkdtempSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { formatBytes } from "../util/parseBytes.ts";
import { sizeof } from "../util/sizeof.ts";
import { MemoryMonitor } from "./memoryMonitor.ts";
import { memoryOrderProblems } from "./memoryOrder.ts";
import { SpillStore } from "./spillStore.ts";
import { collectGarbageOnDemand } from "./throttledGc.ts";
import type { ResolvedWorkerOptions } from "./workerOptions.ts";

/** What the memory monitor acts on in its worker. */
export interface WorkerMemoryHost {
  readonly logger: Logger;
  /** Have the executor's threads collect their garbage, if they are not the main thread. */
  collectThreadGarbage(): void;
  /** Pause the worker for memory, or stop pausing it for memory. */
  setPaused(paused: boolean): void;
  /** Close the worker on a fault saying `why`. */
  terminate(why: string): void;
}

/** The data store of a worker with a `memoryLimit`, spilling beyond its target; else null. */
export function spillStoreFor(o: ResolvedWorkerOptions, logger: Logger): SpillStore | null {
  return o.memoryLimit === null
    ? null
    : new SpillStore({
        targetBytes: Math.floor(o.memoryLimit * o.memoryTarget),
        directory: o.spillDirectory,
        sizeof,
        onSpillFailed: (key, err) =>
          logger.warn({ key, err }, "a value could not be spilled to disk; it stays in memory"),
      });
}

/** The memory monitor of a worker whose data store is `spill`: null without a limit or any threshold. */
export function memoryMonitorFor(
  o: ResolvedWorkerOptions,
  spill: SpillStore,
  host: WorkerMemoryHost,
): MemoryMonitor | null {
  if (o.memoryLimit === null) return null;
  if (o.memorySpill === false && o.memoryPause === false && o.memoryTerminate === false) {
    return null;
  }
  const measure = o.memoryMeasure;
  const managed = measure === "managed";
  return new MemoryMonitor(
    o.memoryLimit,
    {
      target: o.memoryTarget,
      spill: o.memorySpill,
      pause: o.memoryPause,
      terminate: o.memoryTerminate,
    },
    {
      measure: managed
        ? () => spill.stats.memoryBytes
        : measure === "process"
          ? () => process.memoryUsage.rss()
          : measure,
      // The store keeps the values it measures within the target itself as they
      // come, except those its writes failed to spill (a full disk): the monitor
      // tries those again, or a worker they paused would stay paused once the
      // disk took them, as a paused worker stores no value that would evict them.
      evictOne: () => spill.evictOne(),
      collectGarbage: managed
        ? null
        : collectGarbageOnDemand(
            (msg, ms) => host.logger.warn({ ms }, msg),
            () => host.collectThreadGarbage(),
          ),
      setPaused: (paused) => host.setPaused(paused),
      terminate: (why) => host.terminate(why),
      measureName: typeof measure === "function" ? "memory" : `${measure} memory`,
      // Values it cannot spill are then values it cannot serialise, not unmanaged memory.
      measuresSpillable: managed,
      logger: host.logger,
    },
  );
}

/**
 * Workers started in a process others already share (a `LocalCluster`'s, after
 * its start: a restart's, a replacement's, a scale's), whose memory is not their
 * own: see {@link refuseMemoryLimitTooSmall}.
 */
const inSharedProcess = new WeakSet<object>();

/** Mark `worker` as started in a process other workers already share. */
export function startsInSharedProcess(worker: object): void {
  inSharedProcess.add(worker);
}

/**
 * A worker beyond its pause or terminate threshold before it has done
 * anything would pause, or close, for good: refuse to start, saying why. Not
 * `worker` beyond its pause threshold alone if it starts in a process others
 * share: what the others (or a task's leak) hold there is no sign of a limit set
 * too small, and refusing it closed a LocalCluster a restart was asked of (each
 * new worker refused, its slot given up after its restarts); it starts paused,
 * as Dask's would, and resumes once the memory falls.
 */
export function refuseMemoryLimitTooSmall(
  monitor: MemoryMonitor | null,
  o: ResolvedWorkerOptions,
  worker?: object,
): void {
  const now = monitor?.look();
  if (now === undefined || now === null) return;
  const { memory, verdict } = now;
  if (!verdict.pause && !verdict.terminate) return;
  if (!verdict.terminate && worker !== undefined && inSharedProcess.has(worker)) return;
  const [share, name, act] = verdict.terminate
    ? [o.memoryTerminate as number, "memoryTerminate", "closes"]
    : [o.memoryPause as number, "memoryPause", "pauses"];
  const measured = typeof o.memoryMeasure === "function" ? "measured" : o.memoryMeasure;
  throw new RangeError(
    `memoryLimit ${formatBytes(o.memoryLimit as number)} is too small: the ${measured} memory ` +
      `is ${formatBytes(memory)} already, beyond the ${Math.round(share * 100)}% of it at which ` +
      `the worker ${act} (${name}); give a larger limit` +
      (o.memoryMeasure === "process"
        ? ', or measure only the task values held (memoryMeasure "managed")'
        : ""),
  );
}

/**
 * Throws, as the worker starts, when a worker with a `memoryLimit` cannot make
 * a directory in its `spillDirectory` (not writable, a read-only file system,
 * a directory such as /proc): every spill would fail, the values beyond the
 * target staying in memory until they paused the worker for good, told only by
 * a warning at the first value. Dask's worker makes its spill directory as it
 * starts, and fails then.
 */
export function refuseUnwritableSpillDirectory(o: ResolvedWorkerOptions): void {
  if (o.memoryLimit === null) return;
  let probe: string;
  try {
    probe = mkdtempSync(join(o.spillDirectory, ".weft-spill-check-"));
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    throw new Error(
      `spillDirectory ${o.spillDirectory} cannot be written in (${code ?? message}): the values ` +
        "beyond the memory target could not be spilled, and would pause the worker for good; " +
        "give a directory this worker can write in",
      { cause: err },
    );
  }
  rmdirSync(probe);
}

/**
 * Warns, as a worker starts, that its `memoryLimit` was above the machine's memory
 * and was lowered to it, in Dask's words: a limit no process here can reach is a
 * mistake (a figure for another machine) that the operator should hear of.
 */
export function warnMemoryLimitCapped(o: ResolvedWorkerOptions, logger: Logger): void {
  if (o.memoryLimitCapped === null) return;
  const { asGiven, machine } = o.memoryLimitCapped;
  logger.warn(
    { memoryLimit: asGiven, systemMemory: machine },
    `Ignoring provided memory limit ${String(asGiven)} due to system memory limit of ${formatBytes(machine)}`,
  );
}

/**
 * Warns, as a worker with a `memoryLimit` starts, of memory thresholds in an
 * order that defeats one of them (`memoryOrder.ts`): taken as given, as Dask
 * does, but said, as such a worker never does what the option names.
 */
export function warnMemoryOrder(o: ResolvedWorkerOptions, logger: Logger): void {
  if (o.memoryLimit === null) return;
  const problems = memoryOrderProblems(o);
  if (problems.length === 0) return;
  const { memoryTarget, memorySpill, memoryPause, memoryTerminate } = o;
  logger.warn(
    { memoryTarget, memorySpill, memoryPause, memoryTerminate },
    `memory thresholds out of order, taken as given (as Dask does): ${problems.join("; ")}`,
  );
}
