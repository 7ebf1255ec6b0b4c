/**
 * Requests to the scheduler waiting for their answer, matched by stimulus id
 * (which must be the request's alone: see `Requests.stimulusId`).
 */
export class PendingAnswers<T> {
  private readonly pending = new Map<
    string,
    { readonly resolve: (answer: T) => void; readonly reject: (err: Error) => void }
  >();

  /** The answer to the request `stimulusId`, once it comes. */
  wait(stimulusId: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.set(stimulusId, { resolve, reject });
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
