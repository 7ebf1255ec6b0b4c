/**
 * Runs async jobs one at a time, in the order given: each starts once the one
 * before has settled, whether it resolved or rejected.
 */
export class Serial {
  private last: Promise<unknown> = Promise.resolve();

  /** Run `job` after every job given before; its own result or rejection. */
  run<T>(job: () => Promise<T>): Promise<T> {
    const next = this.last.then(job);
    this.last = next.catch(() => {});
    return next;
  }
}
