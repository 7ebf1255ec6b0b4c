/**
 * Fetching results from the workers that hold them. Requests made in the
 * same turn of the event loop are coalesced: one `get_data` per worker for
 * all the keys it holds. Holders come from the `key-in-memory` reports; when
 * a holder turns out not to have a key (or is unreachable), the gatherer asks
 * the scheduler where the key is now and tries again. A busy worker is asked
 * again after a short wait.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { isNetworkError } from "../comm/errors.ts";
import { parseGetDataResponse } from "../worker/dataServer.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { LostKeyError } from "./errors.ts";

/** What the gatherer needs of its client. */
export interface GatherHost {
  /** The client's id (told to workers as `who`). */
  readonly id: string;
  /** Rpc connections to workers. */
  readonly peers: PeerPool;
  /** The holders of `key` last reported. */
  holdersOf(key: string): readonly string[];
  /** Ask the scheduler where these keys are held now. */
  whoHas(keys: readonly string[]): Promise<Record<string, readonly string[]>>;
}

interface Deferred {
  resolve(v: unknown): void;
  reject(e: Error): void;
  promise: Promise<unknown>;
}

function deferred(): Deferred {
  let resolve!: (v: unknown) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<unknown>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { resolve, reject, promise };
}

/** Rounds of asking (each after refreshing the holders) before a key counts as lost. */
const MAX_ROUNDS = 20;
/** Wait before asking a busy worker again, in ms (grows with each round). */
const BUSY_DELAY_MS = 10;

/** Fetches results, coalescing the requests of one turn. */
export class Gatherer {
  private batch: Map<string, Deferred> | null = null;

  constructor(private readonly host: GatherHost) {}

  /** The value of `key`. Rejects with a {@link LostKeyError} if no worker has it. */
  fetch(key: string): Promise<unknown> {
    let batch = this.batch;
    if (batch === null) {
      batch = new Map();
      this.batch = batch;
      const b = batch;
      // At the end of this turn: what finishes together is fetched together.
      setImmediate(() => {
        if (this.batch === b) this.batch = null;
        void this.run(b);
      });
    }
    let d = batch.get(key);
    if (d === undefined) {
      d = deferred();
      batch.set(key, d);
    }
    return d.promise;
  }

  private async run(batch: Map<string, Deferred>): Promise<void> {
    let remaining = [...batch.keys()];
    const override = new Map<string, readonly string[]>();
    const lastError = new Map<string, string>();
    for (let round = 0; round < MAX_ROUNDS && remaining.length > 0; round++) {
      if (round > 0) {
        try {
          const whoHas = await this.host.whoHas(remaining);
          for (const key of remaining) override.set(key, whoHas[key] ?? []);
        } catch (err) {
          for (const key of remaining) batch.get(key)?.reject(err as Error);
          return;
        }
      }
      const byWorker = new Map<string, string[]>();
      const next: string[] = [];
      for (const key of remaining) {
        const holders = override.get(key) ?? this.host.holdersOf(key);
        if (holders.length === 0) {
          lastError.set(key, "no worker holds it");
          next.push(key);
          continue;
        }
        const worker = holders[(round + key.length) % holders.length];
        let keys = byWorker.get(worker);
        if (keys === undefined) byWorker.set(worker, (keys = []));
        keys.push(key);
      }
      const results = await Promise.all(
        [...byWorker].map(([worker, keys]) => this.fromWorker(worker, keys, batch, lastError)),
      );
      for (const missed of results) for (const key of missed) next.push(key);
      remaining = next;
      if (remaining.length > 0) await sleep(Math.min(BUSY_DELAY_MS * (round + 1), 50));
    }
    for (const key of remaining) {
      batch.get(key)?.reject(new LostKeyError(key, lastError.get(key) ?? "not found"));
    }
  }

  /** Fetch `keys` from `worker`; resolves the found ones and returns the others. */
  private async fromWorker(
    worker: string,
    keys: string[],
    batch: Map<string, Deferred>,
    lastError: Map<string, string>,
  ): Promise<string[]> {
    let response: unknown;
    try {
      const rpc = await this.host.peers.get(worker);
      response = await rpc.call("get_data", { keys, who: this.host.id });
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      if (!isNetworkError(err)) {
        // The worker answered with an error (e.g. the value cannot be sent): final.
        for (const key of keys) {
          batch
            .get(key)
            ?.reject(new Error(`cannot fetch the result of ${key}: ${why}`, { cause: err }));
        }
        return [];
      }
      for (const key of keys) lastError.set(key, `${worker}: ${why}`);
      return keys;
    }
    let parsed: ReturnType<typeof parseGetDataResponse>;
    try {
      parsed = parseGetDataResponse(response, new Set(keys), worker);
    } catch (err) {
      for (const key of keys) batch.get(key)?.reject(new LostKeyError(key, (err as Error).message));
      return [];
    }
    if (parsed.status === "busy") {
      for (const key of keys) lastError.set(key, `${worker} stayed busy`);
      return keys;
    }
    const missed: string[] = [];
    for (const key of keys) {
      if (parsed.data.has(key)) {
        batch.get(key)?.resolve(parsed.data.get(key));
      } else {
        lastError.set(key, `${worker} no longer holds it`);
        missed.push(key);
      }
    }
    return missed;
  }
}
