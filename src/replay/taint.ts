import type { WorkerState } from "../worker/state/workerState.ts";

/**
 * Tasks whose history began before the stimulus log, and every task linked to them
 * by a dependency (their states depend on it): a replay from the middle of a worker's
 * life cannot rebuild them, so they are not compared.
 */
export class Taint {
  readonly #keys = new Set<string>();

  /** Number of tainted tasks. */
  get size(): number {
    return this.#keys.size;
  }

  /** Whether `key` is tainted. */
  has(key: string): boolean {
    return this.#keys.has(key);
  }

  /** Whether any of `keys` is tainted. */
  any(keys: readonly string[]): boolean {
    for (const k of keys) if (this.#keys.has(k)) return true;
    return false;
  }

  /** Taints `keys` and spreads through `ws`'s dependency links. */
  add(ws: WorkerState, keys: Iterable<string>): void {
    const queue: string[] = [];
    for (const k of keys) {
      if (!this.#keys.has(k)) {
        this.#keys.add(k);
        queue.push(k);
      }
    }
    this.#spread(ws, queue);
  }

  /** Taints those of `keys` linked to a tainted task (call with the tasks an event touched). */
  spread(ws: WorkerState, keys: Iterable<string>): void {
    if (this.#keys.size === 0) return;
    const queue: string[] = [];
    for (const k of keys) {
      if (this.#keys.has(k)) continue;
      const ts = ws.tasks.get(k);
      if (ts === undefined) continue;
      let linked = false;
      for (const d of ts.dependencies) if (this.#keys.has(d.key)) linked = true;
      for (const d of ts.dependents) if (this.#keys.has(d.key)) linked = true;
      if (linked) {
        this.#keys.add(k);
        queue.push(k);
      }
    }
    this.#spread(ws, queue);
  }

  #spread(ws: WorkerState, queue: string[]): void {
    while (queue.length > 0) {
      const ts = ws.tasks.get(queue.pop() as string);
      if (ts === undefined) continue;
      for (const links of [ts.dependencies, ts.dependents]) {
        for (const d of links) {
          if (!this.#keys.has(d.key)) {
            this.#keys.add(d.key);
            queue.push(d.key);
          }
        }
      }
    }
  }
}
