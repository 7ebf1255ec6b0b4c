/**
 * A worker's memory monitor (Dask's `WorkerMemoryManager.memory_monitor`, and
 * the nanny's terminate threshold). Every `memoryMonitorIntervalMs` a worker
 * with a `memoryLimit` measures its memory and, as a share of the limit:
 *
 * - beyond `spill` (0.7), spills values, least recently used first, until it
 *   expects to be back at `target` (0.6). Measuring the values held
 *   (`"managed"`), only those the store failed to write (a full disk) take it
 *   there: the store keeps the others within the target itself;
 * - beyond `pause` (0.8), pauses: starts no task and fetches no input (the state
 *   machine's `PauseEvent`), and the scheduler assigns it nothing, until it is
 *   back at or below the threshold;
 * - beyond `terminate` (0.95), closes on a fault, as Dask's nanny kills its
 *   worker: its results are lost and computed again elsewhere, and a supervisor
 *   (LocalCluster, or whatever restarts `weft worker`) may start another.
 */

import type { Logger } from "pino";
import { formatBytes } from "../util/parseBytes.ts";

/**
 * What a worker's memory is, against its `memoryLimit`: `"managed"`, the bytes
 * of the task values it holds in memory as `sizeof` measures them; `"process"`,
 * the resident set of the whole process (Dask's measure, right for a worker
 * that has its process to itself); or a function giving bytes.
 */
export type MemoryMeasure = "managed" | "process" | (() => number);

/** Shares of the memory limit at which the monitor acts; false: never. */
export interface MemoryThresholds {
  /** Where spilling stops (`memoryTarget`). */
  readonly target: number;
  /** Spill beyond this share (`memorySpill`, Dask's 0.7). */
  readonly spill: number | false;
  /** Pause beyond this share (`memoryPause`, Dask's 0.8). */
  readonly pause: number | false;
  /** Close on a fault beyond this share (`memoryTerminate`, Dask's nanny's 0.95). */
  readonly terminate: number | false;
}

/** What to do at a measured memory use. */
export interface MemoryVerdict {
  /** The memory as a share of the limit. */
  readonly fraction: number;
  /** Whether the worker should be paused now. */
  readonly pause: boolean;
  /** Whether the worker should be closed on a fault now. */
  readonly terminate: boolean;
  /** Bytes to spill to get back to the target; 0 at or below the spill threshold. */
  readonly spillBytes: number;
}

/** What the thresholds say of `memory` bytes against `limit` (each acts only strictly beyond its share, as Dask's). */
export function memoryVerdict(memory: number, limit: number, t: MemoryThresholds): MemoryVerdict {
  const fraction = memory / limit;
  return {
    fraction,
    pause: t.pause !== false && fraction > t.pause,
    terminate: t.terminate !== false && fraction > t.terminate,
    spillBytes: t.spill !== false && fraction > t.spill ? Math.ceil(memory - limit * t.target) : 0,
  };
}

/** What a {@link MemoryMonitor} measures and acts on. */
export interface MemoryMonitorHooks {
  /** The memory now, in bytes. */
  measure(): number;
  /**
   * Spill the least recently used value that can be: its bytes, -1 when none
   * can, or -2 when writing it failed (`SpillStore.evictOne`; a full disk, which
   * the store logs: tried again at the next check). Null when spilling is not
   * the monitor's to do.
   */
  readonly evictOne: (() => number) | null;
  /**
   * A (throttled) full garbage collection, so that memory let go of shows in
   * the measure: run at each look while beyond the pause share, and after a
   * spill, as Dask's monitor does. Null where collecting changes nothing measured.
   */
  readonly collectGarbage: (() => void) | null;
  /** Pause the worker, or let it resume (it may stay paused for another reason). */
  setPaused(paused: boolean): void;
  /** Close the worker on a fault saying `why`. Called once. */
  terminate(why: string): void;
  /** What the measure is, in lower case, for the log: `"process memory"`, `"managed memory"`. */
  readonly measureName: string;
  /**
   * True when the measure is the bytes of the values `evictOne` spills (the
   * `"managed"` measure): nothing left to spill beyond `spill` then means values
   * that cannot be serialised, not memory the store does not manage, and the
   * warning says so. Default false.
   */
  readonly measuresSpillable?: boolean;
  /** Where the monitor logs what it does (spilling, pausing, terminating). */
  readonly logger: Logger;
}

/** Measures and acts on each {@link check}; see the module's comment. */
export class MemoryMonitor {
  private paused = false;
  private terminated = false;
  /** Whether the episode beyond the spill threshold has warned that nothing is left to spill. */
  private warnedNothingToSpill = false;
  private warnedBadMeasure = false;
  private lastMeasured: number | null = null;

  constructor(
    private readonly limit: number,
    private readonly thresholds: MemoryThresholds,
    private readonly hooks: MemoryMonitorHooks,
  ) {}

  /** The memory the last {@link check} measured, in bytes; null before one worked. */
  get memory(): number | null {
    return this.lastMeasured;
  }

  /** True while the monitor holds the worker paused. */
  get isPaused(): boolean {
    return this.paused;
  }

  /** Measure once, without acting: the memory and what it calls for; null if the measure failed. */
  look(): { readonly memory: number; readonly verdict: MemoryVerdict } | null {
    const memory = this.measure();
    return memory === null
      ? null
      : { memory, verdict: memoryVerdict(memory, this.limit, this.thresholds) };
  }

  /** Measure once and act; null if the measure failed (logged once) or the worker was terminated. */
  check(): MemoryVerdict | null {
    if (this.terminated) return null;
    const memory = this.measure();
    if (memory === null) return null;
    this.lastMeasured = memory;
    const v = memoryVerdict(memory, this.limit, this.thresholds);
    const { logger, measureName } = this.hooks;
    const usage = `${capitalized(measureName)}: ${formatBytes(memory)} -- Worker memory limit: ${formatBytes(this.limit)}`;
    const percent = Math.floor(v.fraction * 100);
    if (v.terminate) {
      this.terminated = true;
      const share = Math.round((this.thresholds.terminate as number) * 100);
      const why = `its ${measureName} (${formatBytes(memory)}) exceeded ${share}% of its limit (${formatBytes(this.limit)})`;
      logger.warn(
        { memory, limit: this.limit },
        `Worker exceeded ${share}% memory budget. ${usage}`,
      );
      this.hooks.terminate(why);
      return v;
    }
    if (v.pause !== this.paused) {
      this.paused = v.pause;
      logger.warn(
        { memory, limit: this.limit },
        `Worker is at ${percent}% memory usage. ${v.pause ? "Pausing" : "Resuming"} worker. ${usage}`,
      );
      this.hooks.setPaused(v.pause);
    }
    let spilled = 0;
    if (v.spillBytes > 0) spilled = this.spill(v.spillBytes, memory);
    else this.warnedNothingToSpill = false;
    // What tasks let go of, and the values spilled, leave the resident set only once collected.
    if (v.pause || spilled > 0) this.hooks.collectGarbage?.();
    return v;
  }

  private measure(): number | null {
    let memory: unknown;
    try {
      memory = this.hooks.measure();
    } catch (err) {
      memory = err;
    }
    if (typeof memory === "number" && Number.isFinite(memory) && memory >= 0) return memory;
    if (!this.warnedBadMeasure) {
      this.warnedBadMeasure = true;
      this.hooks.logger.error(
        { got: memory instanceof Error ? memory : String(memory) },
        "the memory measure failed or gave no byte count: the memory monitor does nothing until it works",
      );
    }
    return null;
  }

  /** Spill `need` bytes of values (as the store measures them), or all that can be: the values spilled. */
  private spill(need: number, memory: number): number {
    const evictOne = this.hooks.evictOne;
    if (evictOne === null) return 0;
    let spilled = 0;
    let count = 0;
    while (spilled < need) {
      const bytes = evictOne();
      // A failed write (-2) is no sign of memory the store does not hold: as
      // Dask's monitor, stop, and try again at the next check.
      if (bytes === -2) break;
      if (bytes < 0) {
        if (!this.warnedNothingToSpill) {
          this.warnedNothingToSpill = true;
          const usage = `${capitalized(this.hooks.measureName)}: ${formatBytes(memory)} -- Worker memory limit: ${formatBytes(this.limit)}`;
          this.hooks.logger.warn(
            { memory, limit: this.limit },
            this.hooks.measuresSpillable === true
              ? `Memory use is high: the values left in memory cannot be serialised to be spilled. -- ${usage}`
              : `Unmanaged memory use is high: no value left to spill. -- ${usage}`,
          );
        }
        break;
      }
      spilled += bytes;
      count++;
    }
    if (count > 0) {
      this.hooks.logger.debug(
        { count, bytes: spilled },
        "moved values to disk: memory use is high",
      );
    }
    return count;
  }
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
