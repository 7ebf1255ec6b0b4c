/**
 * Getting the results of a client's futures: waiting until they are done,
 * fetching them from the workers (through the gatherer, together when several
 * are wanted at once), trying again a key lost with its worker (or from its
 * worker's disk, until it is computed again), and keeping
 * what is awaited reachable meanwhile. Apart from the client: it reads the
 * client's records of keys and never writes them, and its waits and retries
 * are one concern that `gather`, `await future`, `replicate` and `rebalance`
 * share.
 */

import { ClientClosedError, LostKeyError } from "./errors.ts";
import { Future } from "./future.ts";
import { replaceFutures, searchFutures } from "./futureSearch.ts";
import { type Gatherer, LostFromDiskError } from "./gatherer.ts";
import type { KeyRecord } from "./keyRecord.ts";

/** What {@link Results} needs of its client. */
export interface ResultsHost {
  /** The record of `key`, if the client holds a future of it. */
  record(key: string): KeyRecord | undefined;
  /** Why the client closed (or lost its scheduler); null while it is open. */
  closedError(): Error | null;
}

/** Waits for and fetches the results of a client's futures. */
export class Results {
  /** Futures (and arrays of futures) whose results are awaited: see {@link resultOf}. */
  private readonly awaited = new Map<object, number>();

  constructor(
    private readonly host: ResultsHost,
    private readonly gatherer: Gatherer,
  ) {}

  /**
   * `container` (an array or plain object) with every future found in it, at
   * any depth, replaced by its result: fetched together once all are done.
   */
  async gather(container: object): Promise<unknown> {
    const seen = new Set<Future>();
    searchFutures(container, "gather", (f) => seen.add(f));
    const found = [...seen];
    await this.untilDone(found);
    const values = await this.resultsOf(found);
    const byFuture = new Map<Future, unknown>();
    for (let i = 0; i < found.length; i++) byFuture.set(found[i], values[i]);
    return replaceFutures(container, (f) => byFuture.get(f));
  }

  /**
   * Wait until every future is done, or one fails: then their results are
   * fetched together (one `get_data` per worker) rather than as each finishes.
   */
  untilDone(futures: readonly unknown[]): Promise<void> {
    let pending = 0;
    const waitedOn: KeyRecord[] = [];
    return new Promise<void>((resolve) => {
      // One callback for every record (no promise per future).
      const onChange = (rec: KeyRecord): void => {
        if (--pending !== 0 && rec.status === "finished") return;
        pending = 0;
        // Once one failed, the others' waits are let go: left, each held the
        // process until its key changed (see `LoopHold`), which may be never.
        for (const other of waitedOn.splice(0)) other.offChange(onChange);
        resolve();
      };
      for (const f of futures) {
        if (!(f instanceof Future)) continue;
        const rec = this.host.record(f.key);
        if (rec === undefined || rec.status !== "pending") continue;
        pending++;
        waitedOn.push(rec);
        rec.onChange(onChange);
      }
      if (pending === 0) resolve();
    });
  }

  /** Wait until `futures` are done; throw the error of one that failed or was released. */
  async untilFinished(futures: readonly Future[]): Promise<void> {
    await this.untilDone(futures);
    for (const f of futures) {
      const rec = this.host.record(f.key);
      if (rec?.status !== "finished") {
        throw (
          rec?.error ?? this.host.closedError() ?? new ClientClosedError(`${f.key} was released`)
        );
      }
    }
  }

  /**
   * The results of `items` (futures, and values standing for themselves), as
   * `Promise.all` of their `result()`. When every future is finished, the
   * results are fetched together without a promise per future; a key that
   * could not be fetched goes on as `result()` would after that failure.
   */
  private async resultsOf(items: readonly unknown[]): Promise<unknown[]> {
    // The futures are held until their results are in (see resultOf).
    this.hold(items);
    try {
      return await this.fetchResults(items);
    } finally {
      this.unhold(items);
    }
  }

  private async fetchResults(items: readonly unknown[]): Promise<unknown[]> {
    const out = new Array<unknown>(items.length);
    const keys: string[] = [];
    const at: number[] = [];
    const recs: KeyRecord[] = [];
    for (let i = 0; i < items.length; i++) {
      const f = items[i];
      if (!(f instanceof Future)) {
        out[i] = f;
        continue;
      }
      const rec = f.status === "finished" ? this.host.record(f.key) : undefined;
      if (rec === undefined) return Promise.all(items.map((x) => resultOfFuture(x)));
      keys.push(f.key);
      at.push(i);
      recs.push(rec);
    }
    const got = await this.gatherer.fetchMany(keys);
    const errors = got.errors;
    let retries: Promise<void>[] | null = null;
    for (let j = 0; j < keys.length; j++) {
      const error = errors?.[j];
      if (error === undefined) {
        out[at[j]] = got.values[j];
      } else {
        const i = at[j];
        (retries ??= []).push(
          this.fetchResult(keys[j], { rec: recs[j], error }).then((v) => {
            out[i] = v;
          }),
        );
      }
    }
    if (retries !== null) await Promise.all(retries);
    return out;
  }

  /**
   * The result of `key`: waits until it is done, then fetches it. `holder`
   * (the future, or the array of futures being gathered) is strongly held
   * until then, so that the garbage collector cannot release the key while
   * its result is awaited.
   */
  async resultOf(key: string, holder: object): Promise<unknown> {
    this.hold(holder);
    try {
      return await this.fetchResult(key);
    } finally {
      this.unhold(holder);
    }
  }

  /**
   * Keep `holder` reachable (counted: a future may be awaited several times at
   * once) until the matching {@link unhold}.
   */
  hold(holder: object): void {
    this.awaited.set(holder, (this.awaited.get(holder) ?? 0) + 1);
  }

  unhold(holder: object): void {
    const n = (this.awaited.get(holder) ?? 1) - 1;
    if (n === 0) this.awaited.delete(holder);
    else this.awaited.set(holder, n);
  }

  /**
   * The result of `key`, once it is done. `failed`: a fetch of the finished
   * `rec` already failed with `error`.
   */
  private async fetchResult(
    key: string,
    failed?: { rec: KeyRecord; error: unknown },
  ): Promise<unknown> {
    let lostTries = 0;
    let prior = failed;
    for (;;) {
      let rec: KeyRecord;
      let error: unknown;
      if (prior !== undefined) {
        rec = prior.rec;
        error = prior.error;
        prior = undefined;
      } else {
        const r = this.host.record(key);
        if (r === undefined) {
          throw (
            this.host.closedError() ??
            new ClientClosedError(`the future of ${key} was released before its result came`)
          );
        }
        if (r.status === "pending") {
          await r.settled();
          continue;
        }
        if (r.status !== "finished") throw r.error ?? new Error(`${key} ${r.status}`);
        try {
          return await this.gatherer.fetch(key);
        } catch (err) {
          rec = r;
          error = err;
        }
      }
      // Lost with its worker: the scheduler recomputes it (lost-data) and reports again.
      if (!(error instanceof LostKeyError)) throw error;
      // Lost from disk by its holders, which still claim it while tasks there read it
      // (which may take long): not counted, as the scheduler recomputes it once they
      // drop it. Unbounded as awaiting those tasks is; a holder leaving ends it too.
      if (!(error instanceof LostFromDiskError) && ++lostTries > 3) throw error;
      await changeOrTimeout(rec, 500);
    }
  }
}

/**
 * Resolves at `rec`'s next change, or after `ms`, whichever comes first; the
 * other is let go: a wait left on the record held the program alive (see
 * `KeyRecord`'s `holdLoop`) until the key changed, which a key kept finished never does.
 */
function changeOrTimeout(rec: KeyRecord, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const changed = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      rec.offChange(changed);
      resolve();
    }, ms);
    rec.onChange(changed);
  });
}

function resultOfFuture(f: unknown): Promise<unknown> {
  if (!(f instanceof Future)) return Promise.resolve(f);
  return f.result();
}
