/**
 * A first-in first-out queue of distinct ids where any id may leave, each
 * operation O(1) amortized: the queue of requests waiting for a lock, whose
 * head holds it and any of which may withdraw (a timeout, its client leaving).
 * A {@link RemovableFifo} with the slot of each id by id.
 */

import { RemovableFifo, type Slot } from "./removableFifo.ts";

export class IdQueue {
  private readonly order = new RemovableFifo<string>();
  /** The slot of each id in the queue. */
  private readonly members = new Map<string, Slot<string>>();

  /** How many ids are in the queue. */
  get length(): number {
    return this.members.size;
  }

  /** Append `id` (not in the queue). */
  push(id: string): void {
    this.members.set(id, this.order.push(id));
  }

  /** The oldest id, or undefined when empty. */
  first(): string | undefined {
    return this.order.peek();
  }

  /** The ids, oldest first. */
  toArray(): string[] {
    return [...this.order];
  }

  /** Take `id` out of the queue, wherever it is (nothing if it is not there). */
  remove(id: string): void {
    const slot = this.members.get(id);
    if (slot === undefined) return;
    this.members.delete(id);
    this.order.remove(slot);
  }
}
