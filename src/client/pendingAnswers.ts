/**
 * Requests to the scheduler waiting for their answer, matched by stimulus id
 * (which must be the request's alone: see `Requests.stimulusId`).
 */
export class PendingAnswers<T> {
  private readonly pending = new Map<
    string,
    { readonly resolve: (answer: T) => void; readonly reject: (err: Error) => void }
  >();

  constructor(
    /**
     * Keeps the process alive until the function it returns is called: while
     * an answer is awaited (see `LoopHold`). Default: nothing.
     */
    private readonly holdLoop: (() => () => void) | null = null,
  ) {}

  /** The answer to the request `stimulusId`, once it comes. */
  wait(stimulusId: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const release = this.holdLoop?.();
      this.pending.set(stimulusId, {
        resolve: (answer) => {
          release?.();
          resolve(answer);
        },
        reject: (err) => {
          release?.();
          reject(err);
        },
      });
    });
  }

  /** The answer to `stimulusId` came: true if a request was waiting for it. */
  answer(stimulusId: string, answer: T): boolean {
    const p = this.pending.get(stimulusId);
    if (p === undefined) return false;
    this.pending.delete(stimulusId);
    p.resolve(answer);
    return true;
  }

  /** The request `stimulusId` will not be answered: it fails with `err`. */
  fail(stimulusId: string, err: Error): void {
    const p = this.pending.get(stimulusId);
    if (p === undefined) return;
    this.pending.delete(stimulusId);
    p.reject(err);
  }

  /** Every request waiting fails with `err` (the client closed). */
  failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}
