/**
 * Events the scheduler server keeps for clients (Dask's `EventExtension`):
 * by name, set or clear, dropped once clear with nobody waiting.
 */

import { DEFERRED, type Reply, Waiters } from "./waiters.ts";

/** An event: set or clear, with clients waiting for it to be set. */
export class Events {
  private readonly byName = new Map<string, { isSet: boolean; waiters: Waiters<null> }>();

  constructor(private readonly reply: Reply) {}

  set(name: string): null {
    const e = this.get(name);
    e.isSet = true;
    e.waiters.answerAll(true);
    return null;
  }

  clear(name: string): null {
    const e = this.byName.get(name);
    if (e !== undefined) e.isSet = false;
    this.dropIfIdle(name);
    return null;
  }

  isSet(name: string): boolean {
    return this.byName.get(name)?.isSet ?? false;
  }

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

  clientLeft(client: string): void {
    for (const [name, e] of [...this.byName]) {
      e.waiters.dropClient(client);
      this.dropIfIdle(name);
    }
  }

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
