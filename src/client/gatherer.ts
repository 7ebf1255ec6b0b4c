/**
 * Fetching results from the workers that hold them. Requests made in the
 * same turn of the event loop are coalesced: one `get_data` per worker for
 * all the keys it holds. Holders come from the `key-in-memory` reports; when
 * a holder turns out not to have a key (or is unreachable), the gatherer asks
 * the scheduler where the key is now and tries again. A busy worker is asked
 * again after a short wait. A key every holder the scheduler names says it
 * lost from disk is given up, as a {@link LostFromDiskError}, without asking
 * them again: the holders drop it once the tasks there reading it end, and the
 * scheduler computes it again, which the client waits for (see results.ts).
 * The holders reported are not enough: a replica made since (a peer fetched
 * it) is known to the scheduler alone.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { isNetworkError } from "../comm/errors.ts";
import { type ActorRef, isActorRef } from "../protocol/actors.ts";
import { getDataArgs, parseGetDataResponse } from "../worker/dataServer.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import type { Actor } from "./actor.ts";
import { LostKeyError, ResultFetchError } from "./errors.ts";

/** What the gatherer needs of its client. */
export interface GatherHost {
  /** What a fetched actor's result becomes: a handle calling through the client. */
  actorHandle(ref: ActorRef): Actor;
  /** The client's id (told to workers as `who`). */
  readonly id: string;
  /** Rpc connections to workers. */
  readonly peers: PeerPool;
  /** The holders of `key` last reported. */
  holdersOf(key: string): readonly string[];
  /** Ask the scheduler where these keys are held now. */
  whoHas(keys: readonly string[]): Promise<Record<string, readonly string[]>>;
}

/**
 * Every holder of the key found its spilled value gone from disk (`lost` in
 * its `get_data` answer): no round more finds it, yet it is not lost to the
 * cluster, which computes it again once they drop it.
 */
export class LostFromDiskError extends LostKeyError {
  override name = "LostFromDiskError";
  constructor(key: string, holders: readonly string[]) {
    super(
      key,
      `its spilled value is gone from disk on ${holders.join(", ")}, which drop it once the ` +
        "tasks there reading it end, for the scheduler to compute it again",
    );
  }
}

/** Where a fetched value (or the reason it could not be fetched) goes. */
interface Sink {
  resolve(v: unknown): void;
  reject(e: Error): void;
}

/** A sink with a promise: {@link Gatherer.fetch}. */
class Deferred implements Sink {
  resolve!: (v: unknown) => void;
  reject!: (e: Error) => void;
  readonly promise = new Promise<unknown>((res, rej) => {
    this.resolve = res;
    this.reject = rej;
  });
}

/** Several sinks of one key in one batch. */
class Fanout implements Sink {
  constructor(readonly sinks: Sink[]) {}
  resolve(v: unknown): void {
    for (const s of this.sinks) s.resolve(v);
  }
  reject(e: Error): void {
    for (const s of this.sinks) s.reject(e);
  }
}

/** The outcome of {@link Gatherer.fetchMany}: a value or an error per key. */
export interface FetchedMany {
  readonly values: unknown[];
  /** `errors[i]` is set for the keys that could not be fetched; null if none failed. */
  readonly errors: (Error | undefined)[] | null;
}

/** Collects the values of many keys without a promise per key. */
class Collector {
  readonly values: unknown[];
  errors: (Error | undefined)[] | null = null;
  private left: number;
  constructor(
    n: number,
    private readonly done: (got: FetchedMany) => void,
  ) {
    this.values = new Array(n);
    this.left = n;
  }
  settleOne(): void {
    if (--this.left === 0) this.done(this);
  }
}

/** One key of a {@link Collector}. */
class Slot implements Sink {
  constructor(
    private readonly c: Collector,
    private readonly i: number,
  ) {}
  resolve(v: unknown): void {
    this.c.values[this.i] = v;
    this.c.settleOne();
  }
  reject(e: Error): void {
    (this.c.errors ??= [])[this.i] = e;
    this.c.settleOne();
  }
}

/**
 * Rounds in which a key was not found (no holder, stale holders, unreachable)
 * before it is given up as lost. Counted per key: rounds in which a key was
 * answered `busy` do not count for it, whatever happened to the keys fetched
 * with it: a busy worker holds the key and is sending other results (large ones
 * take seconds), and Dask's `gather_from_workers` waits for it too.
 */
const MAX_ROUNDS = 20;
/** Wait before asking a busy worker again, in ms (grows with each round). */
const BUSY_DELAY_MS = 10;

/** What a run of the gatherer learns of its keys' fetches so far. */
interface RoundRecord {
  /** Why each key was not fetched, last. */
  readonly lastError: Map<string, string>;
  /** The keys a holder answered `busy` for, this round. */
  readonly busy: Set<string>;
  /** The holders of each key that said they lost it from disk. */
  readonly lostBy: Map<string, Set<string>>;
}

/** Fetches results, coalescing the requests of one turn. */
export class Gatherer {
  private batch: Map<string, Sink> | null = null;

  constructor(private readonly host: GatherHost) {}

  /** The value of `key`, fetched with the other keys asked for in this turn. */
  fetch(key: string): Promise<unknown> {
    const batch = this.currentBatch();
    const existing = batch.get(key);
    if (existing instanceof Deferred) return existing.promise;
    const d = new Deferred();
    this.addSink(batch, key, existing, d);
    return d.promise;
  }

  /**
   * The values of `keys`, fetched with the other keys asked for in this turn:
   * as {@link fetch} for each, without a promise per key. Never rejects: a key
   * that could not be fetched has its error in `errors`.
   */
  fetchMany(keys: readonly string[]): Promise<FetchedMany> {
    if (keys.length === 0) return Promise.resolve({ values: [], errors: null });
    return new Promise((resolve) => {
      const c = new Collector(keys.length, resolve);
      const batch = this.currentBatch();
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        this.addSink(batch, key, batch.get(key), new Slot(c, i));
      }
    });
  }

  private addSink(batch: Map<string, Sink>, key: string, existing: Sink | undefined, s: Sink) {
    if (existing === undefined) batch.set(key, s);
    else if (existing instanceof Fanout) existing.sinks.push(s);
    else batch.set(key, new Fanout([existing, s]));
  }

  private currentBatch(): Map<string, Sink> {
    let batch = this.batch;
    if (batch === null) {
      batch = new Map();
      this.batch = batch;
      const b = batch;
      setImmediate(() => {
        if (this.batch === b) this.batch = null;
        void this.run(b);
      });
    }
    return batch;
  }

  private async run(batch: Map<string, Sink>): Promise<void> {
    let remaining = [...batch.keys()];
    const override = new Map<string, readonly string[]>();
    const lastError = new Map<string, string>();
    const busy = new Set<string>();
    const failedRounds = new Map<string, number>();
    const lostBy = new Map<string, Set<string>>();
    for (let round = 0; remaining.length > 0; round++) {
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
        // Those that said they lost it are not asked again: they would say the same.
        const lost = lostBy.get(key);
        const left = lost === undefined ? holders : holders.filter((w) => !lost.has(w));
        if (left.length === 0) {
          batch.get(key)?.reject(new LostFromDiskError(key, holders));
          continue;
        }
        const worker = left[(round + key.length) % left.length];
        let keys = byWorker.get(worker);
        if (keys === undefined) byWorker.set(worker, (keys = []));
        keys.push(key);
      }
      const results = await Promise.all(
        [...byWorker].map(([worker, keys]) =>
          this.fromWorker(worker, keys, batch, { lastError, busy, lostBy }),
        ),
      );
      for (const missed of results) for (const key of missed) next.push(key);
      remaining = [];
      for (const key of next) {
        if (!busy.has(key)) {
          const failed = (failedRounds.get(key) ?? 0) + 1;
          if (failed >= MAX_ROUNDS) {
            batch.get(key)?.reject(new LostKeyError(key, lastError.get(key) ?? "not found"));
            continue;
          }
          failedRounds.set(key, failed);
        }
        remaining.push(key);
      }
      busy.clear();
      if (remaining.length > 0) await sleep(Math.min(BUSY_DELAY_MS * (round + 1), 50));
    }
  }

  /**
   * Fetch `keys` from `worker`; resolves the found ones and returns the others
   * (those the worker answered `busy` for are also added to `busy`, those it
   * said it lost from disk to `lostBy`).
   */
  private async fromWorker(
    worker: string,
    keys: string[],
    batch: Map<string, Sink>,
    round: RoundRecord,
  ): Promise<string[]> {
    const { lastError, busy, lostBy } = round;
    let response: unknown;
    try {
      const rpc = await this.host.peers.get(worker);
      response = await rpc.call("get_data", getDataArgs(keys, this.host.id, rpc.comm, false));
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      if (!isNetworkError(err)) {
        // The worker answered with an error (e.g. a value that cannot be sent): the
        // answer carries every key asked for, so ask for each half in turn, down to
        // the keys at fault (a few requests per bad key, one at a time: many at once
        // would be answered busy). For one key, final.
        if (keys.length > 1) {
          const half = keys.length >> 1;
          const missed = await this.fromWorker(worker, keys.slice(0, half), batch, round);
          const more = await this.fromWorker(worker, keys.slice(half), batch, round);
          return missed.length === 0 ? more : [...missed, ...more];
        }
        for (const key of keys) {
          batch.get(key)?.reject(new ResultFetchError(key, why, { cause: err }));
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
      for (const key of keys) busy.add(key);
      return keys;
    }
    const missed: string[] = [];
    const lost = new Set(parsed.lost);
    for (const key of keys) {
      if (parsed.data.has(key)) {
        const value = parsed.data.get(key);
        batch.get(key)?.resolve(isActorRef(value) ? this.host.actorHandle(value) : value);
      } else {
        if (lost.has(key)) {
          lastError.set(key, `${worker} lost its spilled value from disk`);
          let by = lostBy.get(key);
          if (by === undefined) lostBy.set(key, (by = new Set()));
          by.add(worker);
        } else {
          lastError.set(key, `${worker} no longer holds it`);
        }
        missed.push(key);
      }
    }
    return missed;
  }
}
