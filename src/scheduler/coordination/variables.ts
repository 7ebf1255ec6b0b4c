/**
 * Variables the scheduler server keeps for clients (Dask's
 * `VariableExtension`): by name, a value or none, with clients waiting for
 * one to be set. Values are opaque here: a client keeps the futures of its
 * value in a dataset, named in the set (`held`), which the scheduler lets go
 * once the value is replaced or deleted: not the client, which may have left
 * by the time the answer comes.
 */

import { DEFERRED, type Reply, Waiters } from "./waiters.ts";

/** What `variable-get` answers. */
export type ValueOrTimeout = { readonly value: unknown } | { readonly timedOut: true };

/** The variables, by name (see the module comment). */
export class Variables {
  private readonly values = new Map<string, { value: unknown; held: string | null }>();
  private readonly waiting = new Map<string, Waiters<null>>();

  constructor(private readonly reply: Reply) {}

  /**
   * Set `name` to `value`, whose futures the dataset `held` keeps (null: none), answering the
   * waiting gets; returns the dataset of the value replaced, to let go (null if none).
   */
  set(name: string, value: unknown, held: string | null): string | null {
    const old = this.values.get(name)?.held ?? null;
    this.values.set(name, { value, held });
    const w = this.waiting.get(name);
    this.waiting.delete(name);
    w?.answerAll({ value });
    return old;
  }

  /**
   * The value of `name` (`{value}`), or DEFERRED until one is set or `timeoutMs` passed
   * (`{timedOut}`).
   */
  get(
    client: string,
    requestId: number,
    name: string,
    timeoutMs: number | null,
  ): ValueOrTimeout | typeof DEFERRED {
    const kept = this.values.get(name);
    if (kept !== undefined) return { value: kept.value };
    if (timeoutMs === 0) return { timedOut: true };
    let w = this.waiting.get(name);
    if (w === undefined) this.waiting.set(name, (w = new Waiters(this.reply)));
    const waiters = w;
    waiters.add(client, requestId, null, timeoutMs, () => {
      if (waiters.size === 0 && this.waiting.get(name) === waiters) this.waiting.delete(name);
      return { timedOut: true };
    });
    return DEFERRED;
  }

  /** Unset `name`; returns the dataset of the value it had, to let go (null if none). */
  delete(name: string): string | null {
    const old = this.values.get(name)?.held ?? null;
    this.values.delete(name);
    return old;
  }

  /** A client left: its waiting gets are dropped. */
  clientLeft(client: string): void {
    for (const [name, w] of [...this.waiting]) {
      w.dropClient(client);
      if (w.size === 0) this.waiting.delete(name);
    }
  }

  /** Forget every variable, leaving the waiting gets unanswered (the scheduler closing). */
  dropAll(): void {
    for (const w of this.waiting.values()) w.clear();
    this.waiting.clear();
    this.values.clear();
  }
}
