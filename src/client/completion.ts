/**
 * Waiting for futures to be done without fetching their results: Dask's `wait`
 * and `as_completed`. A future is done once its key's status leaves `pending`
 * (finished, failed, cancelled, no worker can run it, the client closed) or it
 * is released: what {@link Future.done} says.
 */

import { Fifo } from "../util/fifo.ts";
import { showValue } from "../util/showValue.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import { knownOptionsOf, nullsAsDefaults } from "./argChecks.ts";
import { Future } from "./future.ts";
import { WAIT_OPTIONS } from "./optionNames.ts";

/** What {@link wait} waits for. */
export interface WaitOptions {
  /** `"all"` (the default): until every future is done; `"first"`: until one is. */
  returnWhen?: "all" | "first";
  /**
   * Give up after this many milliseconds, rejecting with a {@link WaitTimeoutError}.
   * Default (or null, as Dask's `timeout=None`): wait as long as it takes.
   */
  timeout?: number | null;
}

/** The futures {@link wait} was given, split by whether they are done. */
export interface DoneAndNotDone<T = unknown> {
  /** The futures that are done (finished, failed or cancelled). */
  done: Future<T>[];
  /** The futures not done yet (none, unless `returnWhen` is `"first"`). */
  notDone: Future<T>[];
}

/** {@link wait} gave up before its futures were done. */
export class WaitTimeoutError extends Error {
  override name = "WaitTimeoutError";
  constructor(
    /** The timeout that passed, in ms (as {@link WaitOptions.timeout}). */
    readonly timeout: number,
    /** The futures that were not done then. */
    readonly notDone: readonly Future[],
  ) {
    super(
      `${notDone.length} future${notDone.length === 1 ? "" : "s"} not done after ${timeout} ms: ${notDone
        .slice(0, 5)
        .map((f) => f.key)
        .join(", ")}${notDone.length > 5 ? ", …" : ""}`,
    );
  }
}

/**
 * `futures` as a new array; a TypeError naming `what` unless it is a future (where
 * `one` allows it) or an iterable of futures.
 */
function futuresOf<T>(
  futures: Future<T> | Iterable<Future<T>>,
  what: string,
  one: boolean,
): Future<T>[] {
  let list: Future<T>[];
  if (futures instanceof Future) {
    list = [futures];
  } else if (
    typeof futures === "object" &&
    futures !== null &&
    typeof (futures as { [Symbol.iterator]?: unknown })[Symbol.iterator] === "function"
  ) {
    list = [...futures];
  } else {
    const expected = one ? "a future or an iterable of futures" : "an iterable of futures";
    throw new TypeError(`${what}: futures must be ${expected}, got ${showValue(futures)}`);
  }
  for (const [i, f] of list.entries()) {
    if (!(f instanceof Future)) {
      throw new TypeError(`${what}: item ${i} is not a Future (${typeof f})`);
    }
  }
  return list;
}

/**
 * Wait until the futures are done (all of them, or the first with
 * `returnWhen: "first"`), without fetching a result: a failed or cancelled
 * future counts as done, as in Dask. Resolves with the futures split by
 * whether they are done. With `timeout` (ms), rejects with a
 * {@link WaitTimeoutError} if they are not done by then.
 */
export function wait<T>(
  futures: Future<T> | Iterable<Future<T>>,
  options: WaitOptions = {},
): Promise<DoneAndNotDone<T>> {
  let list: Future<T>[];
  let returnWhen: WaitOptions["returnWhen"];
  let timeout: number | undefined;
  try {
    list = futuresOf(futures, "wait", true);
    ({ returnWhen = "all", timeout } = nullsAsDefaults(
      knownOptionsOf("wait", options, WAIT_OPTIONS),
      ["timeout"],
    ));
    if (returnWhen !== "all" && returnWhen !== "first") {
      throw new TypeError(`wait: returnWhen must be "all" or "first", got ${String(returnWhen)}`);
    }
    // Not `timeout >= 0` alone: null and [] pass that, and timed out at once.
    if (timeout !== undefined && !(typeof timeout === "number" && timeout >= 0)) {
      throw new TypeError(
        `wait: timeout must be a number of milliseconds ≥ 0, got ${showValue(timeout)}`,
      );
    }
  } catch (err) {
    return Promise.reject(err);
  }
  const split = (): DoneAndNotDone<T> => ({
    done: list.filter((f) => f.done),
    notDone: list.filter((f) => !f.done),
  });
  const needed = returnWhen === "all" ? list.length : Math.min(1, list.length);
  return new Promise((resolve, reject) => {
    let count = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    // The callbacks still waiting, dropped once settled: a wait polled with a
    // timeout on a long task must not pile them up on its future.
    const stops: (() => void)[] = [];
    const stopWaiting = () => {
      for (const stop of stops.splice(0)) stop();
    };
    const finish = () => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      stopWaiting();
      resolve(split());
    };
    if (needed === 0) {
      finish();
      return;
    }
    for (const f of list) {
      stops.push(
        f.whenDone(() => {
          if (++count === needed) finish();
        }),
      );
      // Settled by a future done already (whose stop does nothing): finish stopped the rest.
      if (settled) return;
    }
    // Node fires a timer of more than 2^31 - 1 ms (or Infinity) at once: no timer then.
    if (timeout !== undefined && timeout <= MAX_TIMER_MS) {
      timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        stopWaiting();
        reject(new WaitTimeoutError(timeout, split().notDone));
      }, timeout);
    }
  });
}

/**
 * What {@link AsCompleted} yields: a done future, wrapped. A future is a thenable,
 * and TypeScript types the items of `for await` as awaited (a bare future would be
 * typed as its result), so it comes in an object, as an `async` function returns one.
 */
export interface Completed<T = unknown> {
  /** The future that is done. */
  future: Future<T>;
}

/**
 * The futures in the order they are done, as an async iterator: Dask's
 * `as_completed`. Each future added is yielded once, when done (a failed or
 * cancelled one too: `await` it to get its result or its error), as
 * `{ future }`. Futures may be added while iterating; the iteration ends once
 * every future added has been yielded, and goes on if more are added then.
 * {@link return} (a `for await`'s `break`) ends it for good: a future added
 * after would never be yielded, so `add` refuses it.
 *
 * ```ts
 * for await (const { future } of asCompleted(futures)) console.log(future.key, await future);
 * ```
 */
export class AsCompleted<T = unknown> implements AsyncIterableIterator<Completed<T>> {
  /** Done futures not yielded yet, in the order they were done. */
  private readonly ready = new Fifo<Completed<T>>();
  /** `next()` calls waiting for a future to be done, oldest first. */
  private readonly readers = new Fifo<(r: IteratorResult<Completed<T>>) => void>();
  private notDone = 0;
  /** What stops waiting for each future not done yet (see {@link return}). */
  private readonly waiting = new Set<() => void>();
  /** After {@link return}: how many futures added were not yielded then; else null. */
  private leftAtReturn: number | null = null;

  constructor(futures: Iterable<Future<T>> = []) {
    for (const f of futuresOf(futures, "asCompleted", false)) this.add(f);
  }

  /**
   * Add a future: it is yielded when done. Throws after {@link return}: the
   * loop that would have yielded it is over, and a silent restart would yield
   * it to whoever calls `next()` next, or to nobody.
   */
  add(future: Future<T>): void {
    futuresOf([future], "asCompleted.add", false);
    if (this.leftAtReturn !== null) {
      throw new Error(
        "asCompleted.add: this asCompleted was ended by return() (a for await that broke out); make a new one for more futures",
      );
    }
    this.notDone++;
    let stop: (() => void) | null = null;
    let fired = false;
    stop = future.whenDone(() => {
      fired = true;
      if (stop !== null) this.waiting.delete(stop);
      this.notDone--;
      const item = { future };
      const reader = this.readers.shift();
      if (reader !== undefined) reader({ value: item, done: false });
      else this.ready.push(item);
      // Readers beyond the last future (several `next()` calls at once) end.
      if (this.notDone === 0) {
        for (const r of this.readers.drain()) r({ value: undefined, done: true });
      }
    });
    if (!fired) this.waiting.add(stop);
  }

  /**
   * Stop: the futures not yielded yet are let be (nothing of this iterator stays
   * on them), and the iteration ends for good (`add` then throws). `for await`
   * calls it on a `break`. {@link count} goes on counting the futures left.
   */
  return(): Promise<IteratorResult<Completed<T>>> {
    this.leftAtReturn ??= this.count;
    for (const stop of this.waiting) stop();
    this.waiting.clear();
    this.notDone = 0;
    this.ready.drain();
    for (const r of this.readers.drain()) r({ value: undefined, done: true });
    return Promise.resolve({ value: undefined, done: true });
  }

  /**
   * How many futures added are not yielded yet (Dask's `count()`), done or
   * not; after {@link return}, how many were left then, never to be yielded.
   */
  get count(): number {
    return this.leftAtReturn ?? this.notDone + this.ready.length;
  }

  /** The next future done (`{ future }`), or the end once every future added was yielded. */
  next(): Promise<IteratorResult<Completed<T>>> {
    const item = this.ready.shift();
    if (item !== undefined) return Promise.resolve({ value: item, done: false });
    if (this.notDone === 0) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => this.readers.push(resolve));
  }

  /** Itself: `for await (const { future } of ac)`. */
  [Symbol.asyncIterator](): AsyncIterableIterator<Completed<T>> {
    return this;
  }
}

/** The futures in the order they are done: `new AsCompleted(futures)`. */
export function asCompleted<T>(futures: Iterable<Future<T>>): AsCompleted<T> {
  return new AsCompleted(futures);
}
