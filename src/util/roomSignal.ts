/**
 * Who waits for room under a bound (a connection's answers in flight: see
 * `answersInFlight.ts`, `answerBacklog.ts`): one promise for all of them,
 * settled when room is made, a new one for the next wait.
 */
export class RoomSignal {
  private pending: { promise: Promise<void>; resolve: () => void } | null = null;

  /** Whether anyone waits. */
  get waiting(): boolean {
    return this.pending !== null;
  }

  /** Resolves at the next {@link open}. */
  wait(): Promise<void> {
    if (this.pending === null) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.pending = { promise, resolve };
    }
    return this.pending.promise;
  }

  /** Room was made: every wait so far resolves. */
  open(): void {
    const pending = this.pending;
    this.pending = null;
    pending?.resolve();
  }
}
