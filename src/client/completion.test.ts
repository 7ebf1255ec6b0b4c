import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { AsCompleted, asCompleted, WaitTimeoutError, wait } from "./completion.ts";
import { RemoteTaskError } from "./errors.ts";
import { Future } from "./future.ts";
import { closeTestClusters, eventually, knownKeys, testCluster } from "./testCluster.ts";
import { standInFutureHost } from "./testFutureHost.ts";
import { boom, inc, slowInc } from "./testTasks.ts";

afterEach(closeTestClusters);

/** One worker with room for every task at once, so tasks finish in the order of their durations. */
const oneWideWorker = () => testCluster({ workers: 1, threadsPerWorker: 4 });

/** The callbacks waiting on `f` (of `wait`, `asCompleted`), on it and on its key's record. */
function callbacksOn(f: Future): { onFuture: number; onRecord: number } {
  type Callbacks = { size?: number; length?: number } | null;
  const inside = f as unknown as { onRelease: Callbacks; record: { waiters: Callbacks } };
  const count = (c: Callbacks) => (c === null ? 0 : (c.size ?? c.length ?? Number.NaN));
  return { onFuture: count(inside.onRelease), onRecord: count(inside.record.waiters) };
}

describe("asCompleted", () => {
  it("yields futures in the order they finish, each once", async () => {
    const { client } = await oneWideWorker();
    const futures = [400, 150, 10].map((ms, i) => client.submit(slowInc, i, ms));
    const it = asCompleted(futures);
    expect(it.count).toBe(3);
    const seen: [string, unknown][] = [];
    for await (const { future } of it) seen.push([future.key, await future]);
    expect(seen).toEqual([
      [futures[2].key, 3],
      [futures[1].key, 2],
      [futures[0].key, 1],
    ]);
    expect(it.count).toBe(0);
    expect(await it.next()).toEqual({ value: undefined, done: true });
  });

  it("yields a failed future too; awaiting it gives the error", async () => {
    const { client } = await oneWideWorker();
    const bad = client.submit(boom, "no");
    const good = client.submit(slowInc, 1, 100);
    const order: Future[] = [];
    for await (const { future } of asCompleted<unknown>([good, bad])) order.push(future);
    expect(order).toEqual([bad, good]);
    await expect(bad).rejects.toBeInstanceOf(RemoteTaskError);
  });

  it("takes futures added while iterating, and ends after the last", async () => {
    const { client } = await oneWideWorker();
    const it = new AsCompleted([client.submit(inc, 1)]);
    const keys: string[] = [];
    for await (const { future } of it) {
      expectTypeOf(future).toEqualTypeOf<Future<number>>();
      keys.push(future.key);
      if (keys.length === 1) it.add(client.submit(slowInc, 5, 50));
    }
    expect(keys).toHaveLength(2);
    expect(keys[1]).toMatch(/^slowInc-/);
  });

  it("ends readers waiting beyond the last future", async () => {
    const { client } = await oneWideWorker();
    const it = asCompleted([client.submit(slowInc, 1, 30)]);
    const [a, b] = await Promise.all([it.next(), it.next()]);
    expect(a.done).toBe(false);
    expect(b).toEqual({ value: undefined, done: true });
  });

  it("a break stops waiting: nothing of the iterator stays on the futures left", async () => {
    const { client } = await oneWideWorker();
    const slow = client.submit(slowInc, 1, 2_000);
    const it = asCompleted([client.submit(inc, 1), slow]);
    for await (const { future } of it) {
      expect(await future).toBe(2);
      break;
    }
    expect(callbacksOn(slow)).toEqual({ onFuture: 0, onRecord: 0 });
    expect(await it.next()).toEqual({ value: undefined, done: true });
    await slow.cancel();
  });

  it("a break ends it for good: count keeps the futures left, and add is refused", async () => {
    const { client } = await oneWideWorker();
    const slow = client.submit(slowInc, 1, 2_000);
    const done = [client.submit(inc, 1), client.submit(inc, 2)];
    await wait(done);
    const it = asCompleted([...done, slow]);
    for await (const _ of it) break;
    // One yielded; one done and one pending never will be.
    expect(it.count).toBe(2);
    expect(() => it.add(client.submit(inc, 3))).toThrow(
      /^asCompleted\.add: this asCompleted was ended by return\(\)/,
    );
    expect(it.count).toBe(2);
    expect(await it.next()).toEqual({ value: undefined, done: true });
    await slow.cancel();
  });

  it("ended by its last future, it takes more and goes on", async () => {
    const { client } = await oneWideWorker();
    const it = asCompleted([client.submit(inc, 1)]);
    for await (const _ of it);
    expect(it.count).toBe(0);
    it.add(client.submit(inc, 2));
    expect(it.count).toBe(1);
    const again: unknown[] = [];
    for await (const { future } of it) again.push(await future);
    expect(again).toEqual([3]);
  });

  it("of nothing ends at once; anything but futures is refused", async () => {
    expect(await asCompleted([]).next()).toEqual({ value: undefined, done: true });
    expect(() => asCompleted([1 as unknown as Future])).toThrow(
      "asCompleted: item 0 is not a Future (number)",
    );
  });

  // Done futures queue up before the first `next()`: with an array's `shift`,
  // each yield moved every one left (V8 trims large arrays from the front only
  // by copying), 300,000 futures taking 36 s; a head index takes well under
  // a second on a quiet machine, and took 3.2 s in a CI run beside three other
  // jobs (load 9): the bound, 15 s, is under half what the quadratic took quiet.
  it("yields 300,000 futures already done in linear time", async () => {
    const host = standInFutureHost();
    const n = 300_000;
    const futures: Future[] = [];
    for (let i = 0; i < n; i++) {
      const f = new Future(host, `k-${i}`);
      host.records.get(f.key)?.finish([], null);
      futures.push(f);
    }
    let yielded = 0;
    let last = "";
    for await (const { future } of asCompleted(futures)) {
      yielded++;
      last = future.key;
    }
    expect(yielded).toBe(n);
    expect(last).toBe(`k-${n - 1}`);
  }, 15_000);
});

describe("wait", () => {
  it("waits for every future without fetching results, failed ones counting as done", async () => {
    const { client } = await oneWideWorker();
    const futures = [client.submit(slowInc, 1, 120), client.submit(boom, "x")];
    const { done, notDone } = await wait(futures);
    expect(done).toEqual(futures);
    expect(notDone).toEqual([]);
    expect(futures.map((f) => f.status)).toEqual(["finished", "error"]);
  });

  it('returns at the first done with returnWhen: "first"', async () => {
    const { client } = await oneWideWorker();
    const slow = client.submit(slowInc, 1, 2_000);
    const quick = client.submit(slowInc, 2, 20);
    const { done, notDone } = await wait([slow, quick], { returnWhen: "first" });
    expect(done).toEqual([quick]);
    expect(notDone).toEqual([slow]);
    await slow.cancel();
  });

  it("leaves nothing on the futures once settled: polling with a timeout does not pile up", async () => {
    const { client } = await oneWideWorker();
    const slow = client.submit(slowInc, 1, 2_000);
    const fast = client.submit(inc, 1);
    for (let i = 0; i < 20; i++) {
      await expect(wait([slow, slow, fast], { timeout: 1 })).rejects.toThrow(WaitTimeoutError);
    }
    expect(callbacksOn(slow)).toEqual({ onFuture: 0, onRecord: 0 });
    await wait([slow, fast], { returnWhen: "first" });
    expect(callbacksOn(slow)).toEqual({ onFuture: 0, onRecord: 0 });
    await slow.cancel();
  });

  it("rejects with WaitTimeoutError naming what is not done", async () => {
    const { client } = await oneWideWorker();
    const slow = client.submit(slowInc, 1, 2_000);
    const err = await wait([slow, client.submit(inc, 1)], { timeout: 100 }).catch((e) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect((err as WaitTimeoutError).notDone).toEqual([slow]);
    expect((err as WaitTimeoutError).message).toBe(`1 future not done after 100 ms: ${slow.key}`);
    await slow.cancel();
  });

  it("futures of a client closed while waited for are done, lost", async () => {
    const { client } = await oneWideWorker();
    const slow = client.submit(slowInc, 1, 2_000);
    const waiting = wait(slow);
    const iterated = asCompleted([slow]).next();
    await client.close();
    expect(await waiting).toEqual({ done: [slow], notDone: [] });
    expect((await iterated).value?.future).toBe(slow);
    expect(slow.status).toBe("lost");
  });

  it("a future released while waited for is done", async () => {
    const { client } = await oneWideWorker();
    const slow = client.submit(slowInc, 1, 2_000);
    const waiting = wait(slow);
    setTimeout(() => slow.release(), 20);
    const { done } = await waiting;
    expect(done).toEqual([slow]);
    expect(slow.status).toBe("released");
  });

  it("resolves at once for done futures and for none; refuses bad input", async () => {
    const { client } = await oneWideWorker();
    const x = client.submit(inc, 1);
    await x;
    expect(await wait([x], { timeout: 0 })).toEqual({ done: [x], notDone: [] });
    expect(await wait([])).toEqual({ done: [], notDone: [] });
    // Timeouts beyond what Node's timers take mean no timeout, not an immediate one.
    const slow = client.submit(slowInc, 2, 150);
    for (const timeout of [Number.POSITIVE_INFINITY, 2 ** 40]) {
      expect(await wait(slow, { timeout })).toEqual({ done: [slow], notDone: [] });
    }
    await expect(wait([{} as Future])).rejects.toThrow("wait: item 0 is not a Future (object)");
    await expect(wait(x, { returnWhen: "any" as "all" })).rejects.toThrow(
      'wait: returnWhen must be "all" or "first", got any',
    );
    await expect(wait(x, { timeout: -1 })).rejects.toThrow(
      "wait: timeout must be a number of milliseconds ≥ 0, got -1",
    );
  });

  it("waiting for the first of no futures resolves at once", async () => {
    expect(await wait([], { returnWhen: "first" })).toEqual({ done: [], notDone: [] });
  });

  it("a timeout names up to five futures not done, with an ellipsis only for more", () => {
    const futures = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ key: `k${i}` }) as Future);
    expect(new WaitTimeoutError(10, futures(5)).message).toBe(
      "5 futures not done after 10 ms: k0, k1, k2, k3, k4",
    );
    expect(new WaitTimeoutError(10, futures(6)).message).toBe(
      "6 futures not done after 10 ms: k0, k1, k2, k3, k4, …",
    );
  });

  it("does not keep a future it waited for from being collected", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const { cluster, client } = await oneWideWorker();
    await (async () => {
      const f = client.submitWith({ pure: false }, "slowInc", 1, 10);
      await wait(f);
      f.whenDone(() => {}); // done: called at once, nothing kept
    })();
    await eventually(
      () => {
        gc();
        return knownKeys(cluster).scheduler.length === 0;
      },
      5_000,
      "the collected future's key is released",
    );
  });
});
