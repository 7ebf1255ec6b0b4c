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

  /** The handled time of the next event (null: keep going from the last reading). */
  setEventTime(time: number | null): void {
    if (time !== null && Number.isFinite(time)) this.#base = time;
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
