import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "./client.ts";
import { AsCompleted, asCompleted, wait } from "./completion.ts";
import { ClientClosedError } from "./errors.ts";
import { LocalCluster } from "./localCluster.ts";
import { watchProgress } from "./progress.ts";
import { workerClient } from "./taskClient.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "./testCluster.ts";
import { inc, slowInc } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("client calls given what a user may easily give by mistake", () => {
  it("cancel refuses keys and other non-futures instead of waiting forever", async () => {
    const { cluster, client } = await testCluster();
    const f = client.submit(slowInc, 1, 60_000);
    await expect(client.cancel([f.key as never])).rejects.toThrow(/cancel: expected futures, got/);
    await expect(client.cancel(null as never)).rejects.toThrow(/cancel: expected futures/);
    // A future of another client is taken: this client holds nothing of it to cancel.
    const other = await cluster.client();
    const theirs = other.submit(inc, 10);
    await client.cancel(theirs);
    expect(await theirs).toBe(11);
    await client.cancel([f]);
    expect(f.status).toBe("cancelled");
  });

  it("submit, map and compute refuse a released future as an argument, rather than cancel the task later", async () => {
    const { client } = await testCluster();
    const f = client.submit(inc, 1);
    expect(await f).toBe(2);
    f.release();
    expect(() => client.submit(inc, f as never)).toThrow(
      `submit(inc): args[0] is the future of ${f.key}, which was released`,
    );
    expect(() => client.map(inc, [f as never])).toThrow(
      /^map\(inc\), item 0: args\[0\] is the future of/,
    );
    expect(() => client.compute({ a: ["inc", f] })).toThrow(
      `compute: graph key "a": args[0] is the future of ${f.key}, which was released`,
    );
    expect(await client.submit(inc, 1)).toBe(2); // the key submitted afresh is fine
  });

  it('"__proto__" cannot name a scattered value or an event topic (it would name a prototype)', async () => {
    const { client } = await testCluster();
    const named = JSON.parse('{"__proto__": 1, "b": 2}') as Record<string, number>;
    await expect(client.scatter(named)).rejects.toThrow('scatter: "__proto__" cannot name a value');
    await expect(client.logEvent("__proto__", { x: 1 })).rejects.toThrow(
      'logEvent: "__proto__" cannot be a topic',
    );
    await expect(client.unsubscribeTopic("__proto__")).rejects.toThrow(
      'unsubscribeTopic: "__proto__" cannot be a topic',
    );
    await client.logEvent("fine", { x: 1 });
    expect(Object.keys(await client.getEvents())).toContain("fine");
  });

  it("Dask's positional keys, second iterable and errors= are refused saying how weft takes them", async () => {
    const { client } = await testCluster();
    // biome-ignore lint/suspicious/noExplicitAny: the calls are Dask's, ported as written
    const c: any = client;
    const graph = { a: 1, b: ["inc", "a"] };
    // Before: "get: options must be an object, got [\"b\"]", which said not where the keys go.
    await expect(c.get(graph, ["b"])).rejects.toThrow(
      'get: options must be an object, got ["b"]: the keys wanted go in the options, get(graph, { keys: ["b"] }) (Dask\'s client.get(dsk, keys) takes them second)',
    );
    await expect(c.get(graph, "b")).rejects.toThrow(
      /^get: .*, got "b": .*get\(graph, \{ keys: \["b"\] \}\)/,
    );
    expect(() => c.compute(graph, ["b"])).toThrow(
      'compute: options must be an object, got ["b"]: the keys wanted go in the options, compute(graph, { keys: ["b"] })',
    );
    expect(() => c.map(inc, [1, 2], [3, 4])).toThrow(
      /^map: options must be an object, got \[3,4\]: map takes one iterable of items.*Dask's map\(f, xs, ys\) calls f\(x, y\)/,
    );
    expect(() => c.map(inc, [1, 2], new Set([3, 4]))).toThrow(/^map: .*map takes one iterable/);
    // Before: the "skip" dropped, the gather rejecting at the first error all the same.
    const fs = [client.submit(inc, 1)];
    await expect(c.gather(fs, "skip")).rejects.toThrow(
      /^gather: takes the futures alone, got a second argument "skip" \(Dask's errors=\): .*Promise\.allSettled/,
    );
    // Dask's keyword written as weft's options elsewhere: dropped without a word before.
    await expect(c.gather(fs, { errors: "skip" })).rejects.toThrow(
      'gather: takes the futures alone, got a second argument {"errors":"skip"} (options: it takes none): weft\'s gather rejects with the first error, as errors="raise"; to skip the failed ones, await Promise.allSettled',
    );
    expect(await c.gather(fs, undefined)).toEqual([2]);
    // An index, as Array.prototype.map gives a bound gather, is no Dask argument.
    expect(await Promise.all([fs].map(c.gather.bind(client)))).toEqual([[2]]);
    expect(await client.get(graph, { keys: ["b"] })).toEqual({ b: 2 });
  });

  it("Dask's positional workers of scatter are refused saying how weft takes them", async () => {
    const { client } = await testCluster();
    // biome-ignore lint/suspicious/noExplicitAny: the call is Dask's, ported as written
    const c: any = client;
    const [address] = (await client.workers()).map((w) => w.address);
    // Before: "scatter: options must be an object, got [...]", not where the workers go.
    await expect(c.scatter([1], [address])).rejects.toThrow(
      `scatter: options must be an object, got ${JSON.stringify([address])}: the workers go in the options, scatter(values, { workers: ${JSON.stringify([address])} }) (Dask's client.scatter(data, workers) takes them second)`,
    );
    await expect(c.scatter([1], address)).rejects.toThrow(
      `scatter: options must be an object, got ${JSON.stringify(address)}: the workers go in the options, scatter(values, { workers: ${JSON.stringify([address])} })`,
    );
    const [f] = await client.scatter([1], { workers: [address] });
    expect(await f).toBe(1);
  });
});

/** What a call did: the error it threw or rejected with, or that it did not. */
async function outcome(call: () => unknown): Promise<string> {
  let result: unknown;
  try {
    result = call();
  } catch (err) {
    return shown(err);
  }
  if (!isThenable(result)) return "returned, no error";
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("no answer within 3 s"), 3_000);
  });
  try {
    return await Promise.race([
      Promise.resolve(result).then(
        async (made: unknown) => {
          // What a call that should have been refused made (a cluster, a watch) is let go.
          const m = made as { close?: unknown; stop?: unknown } | null;
          if (typeof m?.stop === "function") await (m as { stop(): unknown }).stop();
          else if (typeof m?.close === "function") await (m as { close(): unknown }).close();
          return "resolved, no error";
        },
        (err: unknown) => shown(err),
      ),
      hung,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    (typeof v === "object" || typeof v === "function") &&
    v !== null &&
    typeof (v as { then?: unknown }).then === "function"
  );
}

/** `TypeError: message` for a TypeError or RangeError; other errors flagged. */
function shown(err: unknown): string {
  if (err instanceof TypeError || err instanceof RangeError) return err.message;
  return `not a TypeError or RangeError: ${String(err)}`;
}

/**
 * Check each row: the call must throw or reject with a TypeError or RangeError
 * whose message matches (and so names the method and the argument). All rows
 * are run, and those that fail are listed together.
 */
async function expectMisuse(rows: readonly (readonly [() => unknown, RegExp])[]): Promise<void> {
  const wrong: string[] = [];
  for (const [call, expected] of rows) {
    const got = await outcome(call);
    if (!expected.test(got)) wrong.push(`${callText(call)}\n  got: ${got}`);
  }
  expect(wrong).toEqual([]);
}

/** The source of a call, without what the test runner's module transform adds. */
function callText(call: () => unknown): string {
  return call
    .toString()
    .replace(/\(0,\s*__vite_ssr_import_\d+__\.(\w+)\)/g, "$1")
    .replace(/__vite_ssr_import_\d+__\./g, "")
    .replace(/\s+/g, " ");
}

// biome-ignore lint/suspicious/noExplicitAny: the calls are what a JavaScript caller may write
type Loose = any;

describe("misuse is answered with an error naming the method and the argument", () => {
  it("Client: options that are not objects, and arguments of the wrong type", async () => {
    const { cluster, client } = await testCluster();
    const c: Loose = client;
    const f = client.submit(inc, 1);
    await f;
    const dir = mkdtempSync(join(tmpdir(), "weft-misuse-"));
    const file = join(dir, "data.txt");
    writeFileSync(file, "x");
    try {
      await expectMisuse([
        [() => c.submitWith(null, inc, 1), /^submitWith: options must be an object, got null$/],
        [() => c.submitWith(undefined, inc, 1), /^submitWith: options must be an object/],
        [() => c.submitWith(5, inc, 1), /^submitWith: options must be an object, got 5$/],
        [() => c.submitWith([], inc, 1), /^submitWith: options must be an object, got \[\]$/],
        [() => c.submitWith({ key: 5 }, inc, 1), /^submitWith: key must be a non-empty string/],
        [() => c.submitWith({ pure: "no" }, inc, 1), /^submitWith: pure must be true or false/],
        [() => c.submitWith({ retries: Symbol("r") }, inc, 1), /^submitWith: retries must be/],
        [() => c.submitWith({ priority: "high" }, inc, 1), /^submitWith: priority must be/],
        [() => c.submitWith({}, 5, 1), /^submitWith: the function must be a task definition/],
        [() => c.submit(5, 1), /^submit: the function must be a task definition/],
        [() => c.submitWith({}, inc, () => 1), /^submitWith\(inc\): args\[0\] is a function/],
        [() => c.submit(inc, () => 1), /^submit\(inc\): args\[0\] is a function/],
        [
          () => c.submitWith({ retires: 3 }, inc, 1),
          /^submitWith: unknown option "retires" \(did you mean retries\?\)$/,
        ],
        [
          () => c.map(inc, [1], { timeout: 5 }),
          /^map: unknown option "timeout" \(the options are /,
        ],
        [
          () => c.compute({ a: ["inc", 1] }, { key: ["a"] }),
          /^compute: unknown option "key" \(did/,
        ],
        [
          () => c.get({ a: 1 }, { wokers: "x" }),
          /^get: unknown option "wokers" \(did you mean workers/,
        ],
        [() => c.map(inc, 5), /^map: items must be an array or another iterable, got 5$/],
        [() => c.map(inc, null), /^map: items must be an array or another iterable, got null$/],
        [() => c.map(inc, "123"), /^map: items must be .*, got the string "123"$/],
        [() => c.map(inc, [1], null), /^map: options must be an object, got null$/],
        [() => c.map(inc, [1], { key: 5 }), /^map: key must be a string \(the prefix/],
        [() => c.map(inc, [1], { key: ["a", "b"] }), /^map: key gives 2 keys for 1 items/],
        [() => c.compute({ a: ["inc", 1] }, null), /^compute: options must be an object/],
        [() => c.compute({ a: ["inc", 1] }, []), /^compute: options must be an object/],
        [
          () => c.compute({ a: ["inc", 1] }, { keys: 5 }),
          /^compute: keys must be an array or another iterable, got 5$/,
        ],
        [() => c.compute({ a: ["inc", 1] }, { keys: null }), /^compute: keys must be an array/],
        [() => c.get(null), /^get: the graph must be an object/],
        [() => c.get({ a: 1 }, null), /^get: options must be an object/],
        [
          () => c.get({ ab: 1 }, { keys: "ab" }),
          /^get: keys must be an array or another iterable, got the string "ab"$/,
        ],
        [() => c.get({ a: 1 }, { retries: -1 }), /^get: retries must be/],
        [() => c.scatter([1], []), /^scatter: options must be an object/],
        [() => c.replicate(f, null), /^replicate: options must be an object/],
        [() => c.rebalance(f, 5), /^rebalance: options must be an object/],
        [() => c.restart(null), /^restart: options must be an object/],
        [() => c.restart([]), /^restart: options must be an object/],
        [() => c.restartWorkers("x", null), /^restartWorkers: options must be an object/],
        [() => c.publishDataset("d", 1, null), /^publishDataset: options must be an object/],
        [
          () => c.publishDataset("d", 1, { override: "yes" }),
          /^publishDataset: override must be true or false/,
        ],
        [() => c.getDataset("d", null), /^getDataset: options must be an object/],
        [() => c.gather(null), /^gather: expected a future, .*, got null$/],
        [() => c.gather(5), /^gather: expected a future, .*, got number$/],
        [() => c.getDataset("d", 5), /^getDataset: options must be an object/],
        [() => c.cancel([], null), /^cancel: options must be an object/],
        [() => c.cancel([f], { force: 1 }), /^cancel: force must be true or false/],
        [() => c.runWith(null, inc, 1), /^runWith: options must be an object/],
        [() => c.uploadFile(file, null), /^uploadFile: options must be an object/],
        [() => c.uploadFile(file, { load: "no" }), /^uploadFile: load must be true or false/],
        [() => c.registerWorkerPlugin("p", null), /^registerWorkerPlugin: options must be/],
        [() => c.registerSchedulerPlugin("p", 5), /^registerSchedulerPlugin: options must be/],
        [() => c.registerNannyPlugin("p", null), /^registerNannyPlugin: options must be/],
        [() => c.registerNannyPlugin("p", { restart: 1 }), /^registerNannyPlugin: restart must/],
        [() => c.semaphore("s", null), /^semaphore: options must be an object/],
        [() => c.queue("q", null), /^queue: options must be an object/],
        [() => c.sub("s", null), /^sub: options must be an object/],
        [() => c.getTaskStream(null), /^getTaskStream: options must be an object/],
        [() => c.getWorkerLogs(null), /^getWorkerLogs: options must be an object/],
        [() => c.getSchedulerLogs([]), /^getSchedulerLogs: options must be an object/],
        [() => c.getMetadata("k", null), /^getMetadata: options must be an object/],
        [() => c.story(undefined), /^story: keys must be non-empty strings, got undefined$/],
        [() => c.dumpClusterState(join(dir, "d"), []), /^dumpClusterState: options must be/],
        [() => c.waitForWorkers(1, null), /^waitForWorkers: options must be an object/],
        [() => c.waitForWorkers(9, { timeoutMs: "5" }), /^waitForWorkers: timeoutMs must be/],
        [() => c.runWith(undefined, inc, 1), /^runWith: options must be an object/],
        [() => c.restartWorkers("x", { timeoutMs: null }), /^restartWorkers: timeoutMs must/],
        [() => c.waitForWorkers(9, { pollMs: true }), /^waitForWorkers: pollMs must be/],
        [() => c.loadTaskModules(10n), /^loadTaskModules: expected a path .*, got "10n"$/],
        [() => c.dumpClusterState(join(dir, "d"), { format: 1n }), /^dumpClusterState: format/],
        [() => c.unregisterWorkerPlugin(5), /^unregisterWorkerPlugin: name .*, got 5$/],
        [() => c.unregisterNannyPlugin(5), /^unregisterNannyPlugin: name .*, got 5$/],
        [() => c.subscribeTopic("t", {}), /^subscribeTopic: the handler must be .*, got \{\}$/],
        [() => c.close(5), /^close: why must be a string, got 5$/],
        [() => Client.connect(5 as Loose), /^Client\.connect: the address must be a non-empty/],
        // "must be a string, got \"\"" said it was not one.
        [
          () => Client.connect(""),
          /^Client\.connect: the address must be a non-empty string .*, got ""$/,
        ],
        [
          () => Client.connect("bogus://x"),
          /^Client\.connect: unknown address scheme "bogus" in "bogus:\/\/x": expected one of inproc, tcp, tls$/,
        ],
        [
          () => Client.connect("tcp://scheduler"),
          /^Client\.connect: missing port number in address "tcp:\/\/scheduler"$/,
        ],
        [
          () => Client.connect(cluster.address, null as Loose),
          /^Client\.connect: options must be an object/,
        ],
        [
          () => Client.connect(cluster.address, { timeout: 5 } as Loose),
          /^Client\.connect: unknown option "timeout" \(did you mean timeoutMs\?\)$/,
        ],
        [
          () => Client.connect(cluster.address, { name: 5 as Loose }),
          /^Client option name must be a non-empty string, got 5$/,
        ],
        [
          () => Client.connect(cluster.address, { logger: {} as Loose }),
          /^Client option logger must be a pino logger/,
        ],
        [
          () => Client.connect(cluster.address, { timeoutMs: 10n as Loose }),
          /^Client option timeoutMs must be .*, got "10n"$/,
        ],
        [
          () => Client.connect(cluster.address, { maxFrameBytes: Symbol("f") as Loose }),
          /^Client option maxFrameBytes must be an integer, got Symbol\(f\)$/,
        ],
        [
          () => Client.connect(cluster.address, { batchedSendIntervalMs: "2" as Loose }),
          /^Client option batchedSendIntervalMs must be/,
        ],
      ]);
      expect(client.isClosed).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("coordination primitives: options that are not objects, a Lock's own name", async () => {
    const { client } = await testCluster();
    const sem: Loose = client.semaphore("sem");
    const lock: Loose = client.lock("lock");
    const multi: Loose = client.multiLock(["a", "b"]);
    const event: Loose = client.event("event");
    const variable: Loose = client.variable("variable");
    const queue: Loose = client.queue("queue");
    const sub: Loose = await client.sub("topic");
    await expectMisuse([
      [() => sem.acquire(null), /^Semaphore\.acquire: options must be an object, got null$/],
      [() => sem.acquire(5), /^Semaphore\.acquire: options must be an object, got 5$/],
      [() => lock.acquire({ timeoutMs: -1 }), /^Lock\.acquire: timeoutMs must be .*, got -1$/],
      [() => lock.acquire(null), /^Lock\.acquire: options must be an object/],
      [() => lock.acquire({ blocking: "no" }), /^Lock\.acquire: blocking must be true or false/],
      [() => multi.acquire(null), /^MultiLock\.acquire: options must be an object/],
      [() => multi.acquire({ blocking: 0 }), /^MultiLock\.acquire: blocking must be true or false/],
      [() => event.wait(null), /^Event\.wait: options must be an object/],
      [() => event.wait(5), /^Event\.wait: options must be an object/],
      [() => variable.get(null), /^Variable\.get: options must be an object/],
      [() => queue.put(1, null), /^Queue\.put: options must be an object/],
      [() => queue.get([]), /^Queue\.get: options must be an object/],
      [() => sub.get(null), /^Sub\.get: options must be an object/],
    ]);
    // Nothing was taken by the calls refused.
    expect(await lock.locked()).toBe(false);
    expect(await sem.getValue()).toBe(0);
  });

  it("wait, asCompleted, watchProgress and workerClient", async () => {
    const { client } = await testCluster();
    const f = client.submit(inc, 1);
    const c: Loose = client;
    const stream = new PassThrough();
    await expectMisuse([
      [() => wait(null as Loose), /^wait: futures must be a future or an iterable of futures/],
      [() => wait(5 as Loose), /^wait: futures must be a future or an iterable of futures/],
      [() => wait(f, null as Loose), /^wait: options must be an object, got null$/],
      [() => wait(f, { timeout: "5" as Loose }), /^wait: timeout must be .*, got "5"$/],
      [() => wait(f, { timeout: Symbol("t") as Loose }), /^wait: timeout must be/],
      [() => asCompleted(null as Loose), /^asCompleted: futures must be an iterable of futures/],
      [() => new AsCompleted(5 as Loose), /^asCompleted: futures must be an iterable of futures/],
      [() => watchProgress(null as Loose, 1, { stream }), /^watchProgress: client must be/],
      [() => watchProgress(c, -1, { stream }), /^watchProgress: total must be an integer/],
      [() => watchProgress(c, Symbol() as Loose, { stream }), /^watchProgress: total must be/],
      [() => watchProgress(c, 1, null as Loose), /^watchProgress: options must be an object/],
      [() => watchProgress(c, 1, {} as Loose), /^watchProgress: stream must be a writable/],
      [() => watchProgress(c, 1, { stream, pollMs: -1 }), /^watchProgress: pollMs must be/],
      [() => watchProgress(c, 1, { stream, label: 5 as Loose }), /^watchProgress: label must/],
      [() => workerClient({} as Loose), /^workerClient: fn must be a function .*, got \{\}$/],
    ]);
  });

  it("client.amm: every method of a closed client rejects with ClientClosedError", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const amm = client.amm;
    await client.close("done");
    const calls: [string, () => Promise<unknown>][] = [
      ["start", () => amm.start()],
      ["stop", () => amm.stop()],
      ["running", () => amm.running()],
      ["status", () => amm.status()],
      ["runOnce", () => amm.runOnce()],
    ];
    for (const [name, call] of calls) {
      await expect(call(), name).rejects.toBeInstanceOf(ClientClosedError);
    }
    // The scheduler's rounds, on by default, were not stopped by the calls refused.
    expect(cluster.scheduler.amm.running).toBe(true);
  });

  it("LocalCluster: options of start, adapt and client", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const start = (o: Loose) => LocalCluster.start(o);
    await expectMisuse([
      [() => start(null), /^LocalCluster\.start: options must be an object, got null$/],
      [() => start(2), /^LocalCluster\.start: options must be an object, got 2$/],
      [() => start({ workers: Symbol("w") }), /^LocalCluster option workers must be/],
      [() => start({ threadsPerWorker: "2" }), /^LocalCluster option threadsPerWorker must/],
      [() => start({ workers: 0, validate: 1 }), /^LocalCluster option validate must be true/],
      [() => start({ workers: 0, logger: 5 }), /^LocalCluster option logger must be a pino/],
      [
        // Its children, the scheduler's and the workers' loggers, would write nothing.
        () => start({ workers: 0, logger: { child: () => ({}) } }),
        /^LocalCluster option logger must be a pino/,
      ],
      [() => start({ workers: 0, scheduler: 5 }), /^LocalCluster option scheduler must be an/],
      [() => start({ workers: 0, worker: [] }), /^LocalCluster option worker must be an object/],
      [() => start({ protocol: "tls", tls: 5 }), /^LocalCluster option tls must be an object/],
      [
        () => start({ workers: 0, threadsPerWorker: 0 }),
        /^LocalCluster option threadsPerWorker must be a positive integer, got 0$/,
      ],
      [
        () => start({ workers: 0, executor: "piscina" }),
        /^LocalCluster option executor must be "inline" or "threads", got "piscina"$/,
      ],
      [
        () => start({ workers: 0, protocol: "udp" }),
        /^LocalCluster option protocol must be "inproc", "tcp" or "tls", got "udp"$/,
      ],
      [
        () => start({ workers: 0, taskModules: CLIENT_TEST_TASKS }),
        /^LocalCluster option taskModules must be an array$/,
      ],
      [
        () => start({ workers: 0, nthreads: 4 }),
        /^LocalCluster\.start: unknown option "nthreads" \(the options are workers, threadsPerWorker, /,
      ],
      [
        () => start({ wrokers: 1, n: 2 }),
        /^LocalCluster\.start: unknown options "wrokers" \(did you mean workers\?\), "n" \(the options are /,
      ],
      // Options the cluster sets itself were overwritten without a word: refused, naming its own.
      [
        () => start({ workers: 0, worker: { nthreads: 4 } }),
        /^LocalCluster option worker\.nthreads is set by the cluster: give the LocalCluster option threadsPerWorker$/,
      ],
      [
        () => start({ workers: 0, worker: { taskModules: [] } }),
        /^LocalCluster option worker\.taskModules is set by the cluster: give the LocalCluster option taskModules$/,
      ],
      [
        () => start({ workers: 0, worker: { name: "mine" } }),
        /^LocalCluster option worker\.name is set by the cluster: it names its workers "0", "1", …$/,
      ],
      [
        () => start({ workers: 0, worker: { executor: "inline" } }),
        /^LocalCluster option worker\.executor is set by the cluster: give the LocalCluster option executor$/,
      ],
      [
        () => start({ workers: 0, scheduler: { validate: true } }),
        /^LocalCluster option scheduler\.validate is set by the cluster: give the LocalCluster option validate$/,
      ],
      [
        () => start({ workers: 0, scheduler: { tls: {} } }),
        /^LocalCluster option scheduler\.tls is set by the cluster: give the LocalCluster option tls$/,
      ],
      [
        () => start({ workers: 0, worker: { tls: {} } }),
        /^LocalCluster option worker\.tls is set by the cluster: give the LocalCluster option tls$/,
      ],
      [() => cluster.adapt(null as Loose), /^adapt: options must be an object, got null$/],
      [() => cluster.client(5 as Loose), /^LocalCluster\.client: options must be an object/],
    ]);
  });

  it("LocalCluster: an option the cluster sets, given as undefined (a spread config), is its absence", async () => {
    const start = (o: Loose) => LocalCluster.start(o); // the types refuse the options the cluster sets
    const cluster = await start({
      workers: 1,
      executor: "inline",
      threadsPerWorker: 2,
      logger: pino({ level: "silent" }),
      scheduler: { validate: undefined, listen: undefined },
      worker: { nthreads: undefined, name: undefined },
    });
    try {
      // The cluster's own values: its option threadsPerWorker, its name "0".
      expect(cluster.workers.map((w) => [w.options.name, w.options.nthreads])).toEqual([["0", 2]]);
    } finally {
      await cluster.close();
    }
  });

  it("LocalCluster: two workers when not told how many", async () => {
    const cluster = await LocalCluster.start({
      executor: "inline",
      logger: pino({ level: "silent" }),
    });
    try {
      expect(cluster.workers.map((w) => w.options.name)).toEqual(["0", "1"]);
      expect(cluster.scheduler.state.workers.size).toBe(2);
    } finally {
      await cluster.close();
    }
  });
});
