/**
 * The order in which a client's calls on one variable or queue reach the
 * scheduler: the order they were made, as over Dask's one comm, even when they
 * are not awaited one by one. A `set` or `put` first copies its value, and one
 * whose value holds futures first publishes them (a round trip): a `delete`, a
 * `get` or another `set` made after it, sent at once, would otherwise overtake
 * it (`v.set({ f: [future] }); v.set(2)` left the variable holding the first
 * value). So each call on a name waits for the calls on it before to be sent,
 * not answered, before it sends.
 */

/** The calls of a client waiting to send, by the name they are made on. */
export class SendOrder {
  /** By key, the turn of the last call to send (resolved once it has sent, or given up). */
  private readonly last = new Map<string, Promise<void>>();

  /**
   * Run `prepare`, then, once every earlier call on `key` has sent or failed,
   * `send` with what it prepared, which must send before it first awaits:
   * its promise. A `prepare` that throws rejects, its turn ending once the
   * earlier calls have sent.
   */
  async inOrder<P, R>(
    key: string,
    prepare: () => P | Promise<P>,
    send: (prepared: P) => Promise<R>,
  ): Promise<R> {
    const before = this.last.get(key);
    let resolveMine!: () => void;
    const mine = new Promise<void>((resolve) => {
      resolveMine = resolve;
    });
    this.last.set(key, mine);
    const done = (): void => {
      resolveMine();
      if (this.last.get(key) === mine) this.last.delete(key);
    };
    let answer: Promise<R>;
    try {
      const prepared = await prepare();
      if (before !== undefined) await before;
      answer = send(prepared);
    } finally {
      // A call that gave up before its turn (its value refused) still ends its
      // turn only after the earlier calls have sent: the later ones, waiting for
      // it alone, would otherwise overtake those (set(a); set(bad); set(b) left a).
      if (before === undefined) done();
      else void before.then(done);
    }
    return answer;
  }
}
