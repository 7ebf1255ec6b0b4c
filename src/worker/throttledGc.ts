/**
 * A full garbage collection at most so often that it takes a bounded share of
 * the time (Dask's `ThrottledGC`): a worker paused for memory collects at each
 * look, as Dask's does, so that memory its tasks let go of shows in the
 * process's resident set and the worker resumes. V8 collects on allocation: an
 * idle, paused worker may otherwise hold garbage for a long time (40 s and more
 * here, for 300 MiB of buffers let go).
 */

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** V8's full collection: `globalThis.gc` (`node --expose-gc`), else exposed now; null if it cannot be had. */
export function fullGarbageCollection(): (() => void) | null {
  const given: unknown = (globalThis as { gc?: unknown }).gc;
  if (typeof given === "function") return given as () => void;
  try {
    // Exposing the collector to contexts made from now on is all this flag does.
    setFlagsFromString("--expose-gc");
    const gc: unknown = runInNewContext("gc");
    return typeof gc === "function" ? (gc as () => void) : null;
  } catch {
    return null;
  }
}

/** Options of a {@link ThrottledGc}. */
export interface ThrottledGcOptions {
  /** Runs a full collection. */
  readonly collect: () => void;
  /** Milliseconds, monotonic (`performance.now`). */
  readonly now: () => number;
  /** The largest share of the time spent collecting. Default 0.05, Dask's. */
  readonly maxShare?: number;
  /** Told of a collection that took longer than `slowMs` (default 1,000). */
  readonly onSlow?: (ms: number) => void;
  readonly slowMs?: number;
}

/** Calls `collect` unless the last collection took the share, or more, of the time since it began (Dask's `<` test). */
export class ThrottledGc {
  private lastStart: number;
  private lastDuration = 0;
  /** Collections run so far. */
  collections = 0;

  constructor(private readonly o: ThrottledGcOptions) {
    this.lastStart = o.now();
  }

  /** Collect, unless the last collection took the share of the time since it began or more; true if it did. */
  collect(): boolean {
    const start = this.o.now();
    // A clock that did not move still lets a microsecond pass.
    const elapsed = Math.max(start - this.lastStart, 1e-3);
    if (this.lastDuration / elapsed >= (this.o.maxShare ?? 0.05)) return false;
    this.o.collect();
    this.collections++;
    this.lastStart = start;
    this.lastDuration = Math.max(this.o.now() - start, 1e-3);
    if (this.lastDuration > (this.o.slowMs ?? 1_000)) this.o.onSlow?.(this.lastDuration);
    return true;
  }
}

/**
 * A throttled full collection, the collector exposed on first use (a process
 * that never needs it never changes a V8 flag); does nothing, after one
 * warning, where it cannot be had. `elsewhere` asks other threads (the pool's)
 * to collect theirs at the same time: each isolate has a heap of its own.
 */
export function collectGarbageOnDemand(
  warn: (msg: string, ms?: number) => void,
  elsewhere: () => void = () => {},
): () => void {
  let gc: ThrottledGc | null | undefined;
  return () => {
    if (gc === undefined) {
      const here = fullGarbageCollection();
      gc =
        here === null
          ? null
          : new ThrottledGc({
              collect: () => {
                elsewhere();
                here();
              },
              now: () => performance.now(),
              onSlow: (ms) =>
                warn(
                  "a full garbage collection took over a second: tasks hold many objects at once",
                  ms,
                ),
            });
      if (gc === null) warn("V8's garbage collector cannot be called: memory let go of shows late");
    }
    gc?.collect();
  };
}

/**
 * A full collection a moment after the last {@link soon} (the timer holds no
 * process or thread alive), when `needed()` says there is something it would
 * let go of. For futures that task code made and dropped: the garbage
 * collector releases them (a `FinalizationRegistry`), and V8 collects on
 * allocation, so that on a thread that then idles (a pool thread between
 * tasks) they held their results on the cluster for good (minutes, seen).
 */
export class CollectWhenIdle {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly needed: () => boolean,
    private readonly collect: () => void,
    private readonly delayMs = 1_000,
  ) {}

  /** Collect `delayMs` from now, unless called again meanwhile (then from then). */
  soon(): void {
    if (this.timer !== null) {
      this.timer.refresh();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.needed()) this.collect();
    }, this.delayMs);
    this.timer.unref();
  }

  /** Do not collect (the owner closes). */
  cancel(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
