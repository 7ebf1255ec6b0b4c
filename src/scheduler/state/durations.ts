/**
 * What the scheduler expects a task to take: the average compute time of its
 * function so far (as Dask's task prefixes keep `duration_average`), or
 * `unknownTaskDuration` before one finished. `epoch` counts the changes of
 * any expected duration: a worker's occupancy, summed at these durations, is
 * kept until the epoch moves on (see occupancy.ts).
 */
export class Durations {
  /** The expected duration of a task whose function has never finished. */
  readonly unknown: number;
  /** Bumped whenever an expected duration changes. */
  epoch = 0;
  private readonly averages: Map<string, number> = new Map();

  constructor(unknown: number) {
    this.unknown = unknown;
  }

  /** The average compute seconds of `fn` so far, or undefined before one finished. */
  get(fn: string): number | undefined {
    return this.averages.get(fn);
  }

  /** Whether a task of `fn` has finished (its duration is measured, not guessed). */
  has(fn: string): boolean {
    return this.averages.has(fn);
  }

  /** The seconds a task of `fn` is expected to take (`fn` undefined: a task without one). */
  expected(fn: string | undefined): number {
    return (fn === undefined ? undefined : this.averages.get(fn)) ?? this.unknown;
  }

  /**
   * Fold a measured compute time of `fn` into its average: the mean of the
   * old average and `seconds` (Dask's `0.5 * duration + 0.5 * old`). A
   * negative, NaN or infinite measure is no measure.
   */
  observe(fn: string, seconds: number): void {
    if (!(seconds >= 0) || !Number.isFinite(seconds)) return;
    const old = this.averages.get(fn);
    const average = old === undefined ? seconds : (old + seconds) / 2;
    this.averages.set(fn, average);
    if (average !== (old ?? this.unknown)) this.epoch++;
  }
}
