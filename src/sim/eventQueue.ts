/**
 * The simulator's clock and agenda: a binary heap of callbacks ordered by
 * (virtual time, sequence number). Two events at the same time fire in the
 * order they were scheduled, so a run is a deterministic function of its seed.
 */

/** One scheduled callback. */
interface Entry {
  readonly time: number;
  readonly seq: number;
  readonly fire: () => void;
  /** Housekeeping (heartbeats, periodic checks): does not count as pending work. */
  readonly periodic: boolean;
}

function before(x: Entry, y: Entry): boolean {
  return x.time < y.time || (x.time === y.time && x.seq < y.seq);
}

/** A priority queue of callbacks on virtual time. */
export class EventQueue {
  private readonly heap: Entry[] = [];
  private seq = 0;
  private workPending = 0;
  /** Virtual seconds: the time of the event firing now (or last fired). */
  now = 0;
  /** Events fired so far. */
  fired = 0;

  /** Number of events scheduled and not yet fired. */
  get size(): number {
    return this.heap.length;
  }

  /** Number of scheduled events that are not periodic housekeeping. */
  get pendingWork(): number {
    return this.workPending;
  }

  /** Run `fire` `delay` virtual seconds from now (delay ≥ 0). */
  at(delay: number, fire: () => void, periodic = false): void {
    if (!(delay >= 0)) throw new RangeError(`delay must be ≥ 0, got ${delay}`);
    this.push({ time: this.now + delay, seq: this.seq++, fire, periodic });
  }

  /** Run `fire` at absolute virtual time `time` (not before now). */
  atTime(time: number, fire: () => void, periodic = false): void {
    this.push({ time: Math.max(time, this.now), seq: this.seq++, fire, periodic });
  }

  /** Fire the earliest event; false when the queue is empty. */
  step(): boolean {
    const e = this.pop();
    if (e === undefined) return false;
    this.now = e.time;
    this.fired++;
    e.fire();
    return true;
  }

  /** Time of the earliest event, or Infinity. */
  peekTime(): number {
    return this.heap.length > 0 ? this.heap[0].time : Number.POSITIVE_INFINITY;
  }

  private push(e: Entry): void {
    if (!e.periodic) this.workPending++;
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(e, h[p])) break;
      h[i] = h[p];
      i = p;
    }
    h[i] = e;
  }

  private pop(): Entry | undefined {
    const h = this.heap;
    if (h.length === 0) return undefined;
    const top = h[0];
    const last = h.pop() as Entry;
    if (h.length > 0) {
      let i = 0;
      const n = h.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && before(h[r], h[l]) ? r : l;
        if (!before(h[c], last)) break;
        h[i] = h[c];
        i = c;
      }
      h[i] = last;
    }
    if (!top.periodic) this.workPending--;
    return top;
  }
}
