/**
 * A first-in first-out queue whose entries may also leave from anywhere, each
 * operation O(1) amortized: the requests waiting on a coordination primitive
 * (any of which may time out or lose its client) and the queue of a lock.
 *
 * An array searched and spliced for each entry leaving cost O(n) an entry
 * (160,000 requests for one multi-lock, released in turn, took 15 s). Here an
 * entry leaving is only marked so; its slot is skipped when it reaches the
 * front, and the slots are rebuilt once they are mostly such marks.
 */

import { Fifo } from "./fifo.ts";

/** Slots of entries gone tolerated, whatever the length. */
const COMPACT_AFTER = 1024;

/** An entry's slot, which {@link RemovableFifo.push} returns for {@link RemovableFifo.remove}. */
export interface Slot<T> {
  readonly value: T;
  /** True once it left (removed, or shifted). */
  gone: boolean;
}

export class RemovableFifo<T> implements Iterable<T> {
  private slots = new Fifo<Slot<T>>();
  /** How many of `slots` were removed but not yet dropped. */
  private gone = 0;

  /** Number of entries held. */
  get length(): number {
    return this.slots.length - this.gone;
  }

  /** Append `value` as the newest entry: its slot, to remove it by. */
  push(value: T): Slot<T> {
    const slot: Slot<T> = { value, gone: false };
    this.slots.push(slot);
    return slot;
  }

  /** The oldest entry, left in place, or undefined if there is none. */
  peek(): T | undefined {
    return this.front()?.value;
  }

  /** Remove and return the oldest entry, or undefined if there is none. */
  shift(): T | undefined {
    const slot = this.front();
    if (slot === undefined) return undefined;
    this.slots.shift();
    slot.gone = true;
    return slot.value;
  }

  /** Take the entry of `slot` out, wherever it is (nothing if it left already). */
  remove(slot: Slot<T>): void {
    if (slot.gone) return;
    slot.gone = true;
    this.gone++;
    if (this.gone > COMPACT_AFTER && this.gone * 2 > this.slots.length) this.compact();
  }

  /** Keep only the entries `keep` is true of, in order: O(length). */
  retain(keep: (value: T) => boolean): void {
    for (const slot of this.slots) if (!slot.gone && !keep(slot.value)) slot.gone = true;
    this.compact();
  }

  /** Remove every entry. */
  clear(): void {
    for (const slot of this.slots) slot.gone = true;
    this.slots = new Fifo();
    this.gone = 0;
  }

  /** The entries, oldest first (not to be changed while iterated). */
  *[Symbol.iterator](): Iterator<T> {
    for (const slot of this.slots) if (!slot.gone) yield slot.value;
  }

  /** The oldest slot not gone, dropping those gone before it. */
  private front(): Slot<T> | undefined {
    let slot = this.slots.peek();
    while (slot?.gone === true) {
      this.slots.shift();
      this.gone--;
      slot = this.slots.peek();
    }
    return slot;
  }

  /** Drop the slots of entries gone. */
  private compact(): void {
    this.slots.retain((slot) => !slot.gone);
    this.gone = 0;
  }
}
