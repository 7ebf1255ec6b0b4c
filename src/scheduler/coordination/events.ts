/**
 * Events the scheduler server keeps for clients (Dask's `EventExtension`):
 * by name, set or clear, dropped once clear with nobody waiting.
 */

import { DEFERRED, type Reply, Waiters } from "./waiters.ts";

/** An event: set or clear, with clients waiting for it to be set. */
export class Events {
  private readonly byName = new Map<string, { isSet: boolean; waiters: Waiters<null> }>();

  constructor(private readonly reply: Reply) {}

  /** Set `name`: its waiters are answered true, as is every `wait` until it is cleared. */
  set(name: string): null {
    const e = this.get(name);
    e.isSet = true;
    e.waiters.answerAll(true);
    return null;
  }

  /** Clear `name`: `wait`s from now on wait. */
  clear(name: string): null {
    const e = this.byName.get(name);
    if (e !== undefined) e.isSet = false;
    this.dropIfIdle(name);
    return null;
  }

  /** Whether `name` is set. */
  isSet(name: string): boolean {
    return this.byName.get(name)?.isSet ?? false;
  }

  /**
   * True at once if `name` is set (false with `timeoutMs` 0); else DEFERRED: the answer is sent
   * once it is set (true) or `timeoutMs` passed (false).
   */
  wait(
    client: string,
    requestId: number,
    name: string,
    timeoutMs: number | null,
  ): boolean | typeof DEFERRED {
    if (this.isSet(name)) return true;
    if (timeoutMs === 0) return false;
    this.get(name).waiters.add(client, requestId, null, timeoutMs, () => {
      this.dropIfIdle(name);
      return false;
    });
    return DEFERRED;
  }

  /** A client left: its waiting requests are dropped. */
  clientLeft(client: string): void {
    for (const [name, e] of [...this.byName]) {
      e.waiters.dropClient(client);
      this.dropIfIdle(name);
    }
  }

  /** Forget every event, leaving the waiting requests unanswered (the scheduler closing). */
  dropAll(): void {
    for (const e of this.byName.values()) e.waiters.clear();
    this.byName.clear();
  }

  private get(name: string): { isSet: boolean; waiters: Waiters<null> } {
    let e = this.byName.get(name);
    if (e === undefined) {
      e = { isSet: false, waiters: new Waiters(this.reply) };
      this.byName.set(name, e);
    }
    return e;
  }

  private dropIfIdle(name: string): void {
    const e = this.byName.get(name);
    if (e !== undefined && !e.isSet && e.waiters.size === 0) this.byName.delete(name);
  }
}
