/**
 * A first-in first-out queue of distinct ids where any id may leave, each
 * operation O(1) amortized: the queue of requests waiting for a lock, whose
 * head holds it and any of which may withdraw (a timeout, its client leaving).
 *
 * An array searched and spliced for each leaving id, mostly its head, cost
 * O(n) an id: 160,000 requests for one multi-lock, released in turn, took 15 s.
 * Here an id leaves its membership only; its slot in the order is skipped when
 * it reaches the front, and the order is rebuilt once it is mostly such slots.
 */

import { Fifo } from "./fifo.ts";

/** Slots of ids gone tolerated in the order, whatever its length. */
const COMPACT_AFTER = 1024;

export class IdQueue {
  /** The ids in order, each with the turn it was pushed in; stale once it left. */
  private order = new Fifo<{ readonly id: string; readonly turn: number }>();
  /** The ids in the queue, by the turn they were pushed in. */
  private readonly members = new Map<string, number>();
  private turns = 0;

  /** How many ids are in the queue. */
  get length(): number {
    return this.members.size;
  }

  /** Append `id` (not in the queue). */
  push(id: string): void {
    const turn = this.turns++;
    this.members.set(id, turn);
    this.order.push({ id, turn });
  }

  /** The oldest id, or undefined when empty. */
  first(): string | undefined {
    for (let slot = this.order.peek(); slot !== undefined; slot = this.order.peek()) {
      if (this.members.get(slot.id) === slot.turn) return slot.id;
      this.order.shift();
    }
    return undefined;
  }

  /** The ids, oldest first. */
  toArray(): string[] {
    const out: string[] = [];
    for (const slot of this.order) if (this.members.get(slot.id) === slot.turn) out.push(slot.id);
    return out;
  }

  /** Take `id` out of the queue, wherever it is (nothing if it is not there). */
  remove(id: string): void {
    if (!this.members.delete(id)) return;
    if (this.order.length > COMPACT_AFTER && this.order.length > 2 * this.members.size) {
      this.order.retain((slot) => this.members.get(slot.id) === slot.turn);
    }
  }
}
