/**
 * The simulated network: seeded latencies and transfer times, and ordered
 * connections. A message on a connection never overtakes an earlier one on
 * the same connection (as on a TCP stream); messages on different
 * connections race.
 */

import type { EventQueue } from "./eventQueue.ts";
import type { SimRng } from "./rng.ts";

/** One direction of a connection: the arrival time of its latest message. */
interface Link {
  last: number;
}

/** Latencies, transfer times, and in-order delivery per connection. */
export class Network {
  private readonly links = new Map<string, Link>();

  constructor(
    private readonly queue: EventQueue,
    private readonly rng: SimRng,
    /** Mean one-way latency, virtual seconds. */
    private readonly meanLatency: number,
    /** Bytes per virtual second. */
    private readonly bandwidth: number,
  ) {}

  /** A one-way latency: a tenth of the mean plus an exponential part. */
  latency(): number {
    return this.meanLatency * 0.1 + this.rng.exp(this.meanLatency * 0.9);
  }

  /** Seconds to send `bytes` on a link `slowdown` times slower than normal. */
  transferTime(bytes: number, slowdown = 1): number {
    return this.latency() + (bytes / this.bandwidth) * slowdown;
  }

  /**
   * Deliver on the connection `from → to`: `fire` runs after a latency, and
   * never before anything sent earlier on the same connection.
   */
  send(from: string, to: string, fire: () => void, periodic = false): void {
    const id = `${from}>${to}`;
    let link = this.links.get(id);
    if (link === undefined) {
      link = { last: 0 };
      this.links.set(id, link);
    }
    const at = Math.max(this.queue.now + this.latency(), link.last);
    link.last = at;
    this.queue.atTime(at, fire, periodic);
  }

  /** Forget the connections of an address that left (they are never used again). */
  forget(address: string): void {
    for (const id of this.links.keys()) {
      if (id.startsWith(`${address}>`) || id.endsWith(`>${address}`)) this.links.delete(id);
    }
  }
}
