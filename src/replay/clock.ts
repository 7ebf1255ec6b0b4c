/** The largest handled time followed (2**53 seconds: some 285 million years). */
const MAX_TIME = 2 ** 53;

/**
 * The clock of a replayed WorkerState. Every reading is strictly larger than the one
 * before and at least the dumped `handled` time of the event being replayed, so that
 * - the records each event adds to `ws.log` can be found by their time;
 * - replayed records carry times close to the live run's, and stories that merge them
 *   with the dump's scheduler log stay in order.
 *
 * Readings of one event are a few microseconds apart: far below the 5 ms from which
 * the seed records a slow data store (`disk-write`).
 */
export class ReplayClock {
  #base = 0;
  #last = Number.NEGATIVE_INFINITY;

  /**
   * The handled time of the next event (null: keep going from the last reading). A time
   * beyond ±2**53 s is no time Dask wrote and is ignored as null is: near the top of the
   * double range no larger reading exists, and `now` would step towards it forever.
   */
  setEventTime(time: number | null): void {
    if (time !== null && Math.abs(time) <= MAX_TIME) this.#base = time;
  }

  /** The last reading (−Infinity before the first). */
  get last(): number {
    return this.#last;
  }

  /** A new reading: bound, so it can be handed to the WorkerState as its clock. */
  readonly now = (): number => {
    let t = this.#base > this.#last ? this.#base : this.#last + 1e-6;
    // Far from 0, 1e-6 may be below the spacing of doubles: step until it shows.
    for (let step = 2e-6; t <= this.#last; step *= 2) t = this.#last + step;
    this.#last = t;
    return t;
  };
}
