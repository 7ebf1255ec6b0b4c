/**
 * A future: a handle on a key the client submitted, and a promise of its
 * result. `await future` fetches the result from the worker holding it (each
 * await fetches again; the result stays on the worker). While any future of a
 * key is alive and not released, the cluster keeps the result; releasing the
 * last one (explicitly, or by the garbage collector) lets the scheduler forget it.
 *
 * Futures are thenables: an `async` function that returns a future returns
 * its result. Return `{ future }` to hand the future itself on.
 */

import { inspect } from "node:util";
import { ClientClosedError } from "./errors.ts";
import type { FutureStatus, KeyRecord } from "./keyRecord.ts";

/** What a future needs of its client. */
export interface FutureHost {
  /** The result of `key`, fetched from a worker; `holder` is kept alive until it settles. */
  resultOf(key: string, holder: object): Promise<unknown>;
  /** Cancel these keys (and what depends on them). */
  cancelKeys(keys: readonly string[]): Promise<void>;
  /** Compute this failed future's task again (see `Client.retry`). */
  retry(future: Future): Promise<readonly string[]>;
  /** One reference fewer to `key`. */
  dropRef(key: string): void;
  /** The record of `key`, one reference more. */
  addRef(key: string): KeyRecord;
  /** Identifies the client in errors. */
  readonly id: string;
}

/**
 * What the finalizer of a future needs: its host and key, and whether it was
 * released already (then there is nothing to drop). Marking it is cheaper
 * than unregistering the future (an unregister token costs a weak table entry).
 */
class Held {
  released = false;
  constructor(
    readonly host: FutureHost,
    readonly key: string,
  ) {}
}

const registry = new FinalizationRegistry<Held>((held) => {
  if (!held.released) held.host.dropRef(held.key);
});

/** A submitted task's key and the promise of its result. */
export class Future<T = unknown> implements PromiseLike<T> {
  /** The task's key. */
  readonly key: string;
  /**
   * The client the future belongs to.
   * @internal
   */
  readonly host: FutureHost;
  private readonly record: KeyRecord;
  private readonly held: Held;
  /**
   * Callbacks of {@link whenDone} waiting for a release. On the future, not on its
   * `Held`: the registry holds that strongly, and a closure over the future there
   * would keep the future from ever being collected.
   */
  private onRelease: Set<() => void> | null = null;

  /**
   * Futures are made by a client (`submit`, `map`, `compute`).
   * @internal
   */
  constructor(host: FutureHost, key: string) {
    this.host = host;
    this.key = key;
    this.record = host.addRef(key);
    this.held = new Held(host, key);
    registry.register(this, this.held);
  }

  /** What the client last heard of the key; `released` once {@link release}d. */
  get status(): FutureStatus | "released" {
    return this.held.released ? "released" : this.record.status;
  }

  /** True once the key finished, failed or was cancelled (or the client closed). */
  get done(): boolean {
    const s = this.status;
    return s !== "pending";
  }

  /**
   * Call `cb` once the future is done (synchronously, if it is now): when its key's
   * status leaves `pending`, or when the future is released. For waiting on many
   * futures without a promise each (`wait`, `asCompleted`). Returns what stops
   * waiting (a `wait` that timed out): nothing of the wait stays on the future
   * or its key's record then, nor once `cb` was called.
   * @internal
   */
  whenDone(cb: () => void): () => void {
    if (this.done) {
      cb();
      return noop;
    }
    let called = false;
    const forget = () => {
      this.onRelease?.delete(once);
      this.record.offChange(once);
    };
    const once = () => {
      if (called) return;
      if (!this.done) {
        // Pending again (a reset after a loss): wait for the next change.
        this.record.onChange(once);
        return;
      }
      called = true;
      forget();
      cb();
    };
    this.record.onChange(once);
    (this.onRelease ??= new Set()).add(once);
    return () => {
      if (called) return;
      called = true;
      forget();
    };
  }

  /**
   * The error the key failed with (erred, cancelled, lost, no worker), or null
   * while it has not: read at once, without waiting ({@link exception} waits).
   * @internal
   */
  get failure(): Error | null {
    const s = this.status;
    return s === "pending" || s === "finished" || s === "released" ? null : this.record.error;
  }

  /** The result type's name, once finished. */
  get typename(): string | null {
    return this.record.typename;
  }

  /**
   * The result, fetched from a worker. Rejects with a `RemoteTaskError` if the
   * task failed, a `CancelledError` if it was cancelled, a `NoWorkerError` if no
   * worker can run it, a `ClientClosedError` if the client closed or the
   * future was released (a call made before the release still resolves while
   * another future of the key holds it, as Dask's futures share their key's state).
   */
  result(): Promise<T> {
    if (this.held.released) {
      return Promise.reject(new ClientClosedError(`the future of ${this.key} was released`));
    }
    // The future is held until its result settles: `await client.submit(…)`
    // keeps only the promise, and the collector must not release the key mid-wait.
    return this.host.resultOf(this.key, this) as Promise<T>;
  }

  /** The error the key failed with, or null once it finished. Waits until it is done. */
  async exception(): Promise<Error | null> {
    await this.record.settled();
    return this.record.error;
  }

  // biome-ignore lint/suspicious/noThenProperty: a future is deliberately a thenable
  then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.result().then(onfulfilled, onrejected);
  }

  /** As `Promise.prototype.catch`. */
  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.result().catch(onrejected);
  }

  /** As `Promise.prototype.finally`. */
  finally(onfinally?: (() => void) | null): Promise<T> {
    return this.result().finally(onfinally);
  }

  /**
   * Compute the task again if it failed (Dask's `Future.retry`), with the
   * failed inputs it failed through: see `Client.retry`. Resolves once the
   * scheduler has sent it back to be computed; the future is pending then.
   */
  retry(): Promise<readonly string[]> {
    return this.host.retry(this);
  }

  /** Cancel the task (and those depending on it); the future rejects with `CancelledError`. */
  cancel(): Promise<void> {
    return this.host.cancelKeys([this.key]);
  }

  /**
   * Give up this reference to the key. Once no future of the key is left, the
   * scheduler may forget it and its result. Idempotent.
   */
  release(): void {
    if (this.held.released) return;
    this.held.released = true;
    this.host.dropRef(this.key);
    const waiting = this.onRelease;
    this.onRelease = null;
    if (waiting !== null) for (const cb of waiting) cb();
  }

  toString(): string {
    return `<Future ${this.key} ${this.status}>`;
  }

  /**
   * What `console.log(future)` shows: its key and status, as Dask's repr
   * (`<Future: finished, key: inc-…>`), not its client's internals (kilobytes of
   * connections and records, which `JSON.stringify` cannot even follow).
   */
  [inspect.custom](): string {
    return this.toString();
  }
}

function noop(): void {}

/** True if `v` is a {@link Future}. */
export function isFuture(v: unknown): v is Future {
  return v instanceof Future;
}
