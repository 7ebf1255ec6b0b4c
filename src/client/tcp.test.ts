/**
 * The same code over TCP: a scheduler, workers and a client started
 * separately (as `weft scheduler`, `weft worker` and a program would) on
 * tcp://127.0.0.1, and a LocalCluster on TCP, compute graphs that move data
 * between workers.
 */

import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { chainGraph, mapGraph, shuffleGraph, treeGraph } from "../bench/clusterGraphs.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Worker } from "../worker/worker.ts";
import { Client } from "./client.ts";
import { RemoteTaskError } from "./errors.ts";
import { LocalCluster } from "./localCluster.ts";

const BENCH_TASKS = new URL("../bench/clusterTasks.ts", import.meta.url).href;
const silent = pino({ level: "silent" });
const toClose: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  for (const x of toClose.splice(0).reverse()) await x.close();
});

/** A LocalCluster of the benchmark's tasks (inline executor), closed after the test. */
async function benchCluster(protocol: "inproc" | "tcp", validate = false): Promise<LocalCluster> {
  const cluster = await LocalCluster.start({
    protocol,
    executor: "inline",
    taskModules: [BENCH_TASKS],
    validate,
    logger: silent,
  });
  toClose.push(cluster);
  return cluster;
}

async function computeEverything(client: Client, prefix: string): Promise<void> {
  for (const g of [mapGraph(300), treeGraph(256), shuffleGraph(8, 50), chainGraph(50)]) {
    expect(g.check(await g.run(client, `${prefix}${g.name}-`)), g.name).toBeNull();
  }
}

describe("TCP mode", () => {
  it("a scheduler, two workers and a client, each on its own TCP port", async () => {
    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      validate: true,
      logger: silent,
    });
    toClose.push(scheduler);
    expect(scheduler.address).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    const workers = await Promise.all(
      [1, 2].map(() =>
        Worker.create({
          scheduler: scheduler.address,
          listen: "tcp://127.0.0.1:0",
          nthreads: 1,
          executor: "inline",
          taskModules: [BENCH_TASKS],
          validate: true,
          logger: silent,
        }),
      ),
    );
    toClose.push(...workers);
    const client = await Client.connect(scheduler.address, { logger: silent });
    toClose.push(client);
    expect((await client.workers()).map((w) => w.address).sort()).toEqual(
      workers.map((w) => w.address).sort(),
    );

    await computeEverything(client, "tcp-");
    const counters = await client.counters();
    expect(counters.keysTransferred).toBeGreaterThan(0); // the shuffle moved data between workers
    expect(counters.tasksErred).toBe(0);

    // Errors cross the wire with their texts.
    const bad = client.compute({ x: ["split", null, 2, 0] });
    const err = (await bad.x.catch((e: unknown) => e)) as RemoteTaskError;
    expect(err).toBeInstanceOf(RemoteTaskError);
    expect(err.remoteName).toBe("TypeError");
    expect(err.tracebackText).toMatch(/clusterTasks\.ts/);

    scheduler.state.validateState();
    for (const w of workers) w.state.validateState();
  });

  it("a graph that cannot be sent fails its futures; the client goes on", async () => {
    const cluster = await benchCluster("tcp");
    const client = await Client.connect(cluster.address, {
      logger: silent,
      maxMessageBytes: 20_000,
    });
    toClose.push(client);
    const small = client.submit("inc", 1);
    const big = client.submitWith({ pure: false }, "concat", [
      Array.from({ length: 10_000 }, (_, i) => i),
    ]);
    const request = client.counters(); // sent in the same batch
    expect(await big.catch((e: unknown) => (e as Error).name)).toBe("MessageTooLargeError");
    expect(await small).toBe(2);
    // A key still pending from an earlier submission, asked again in a graph
    // that cannot be sent, is not failed: the earlier submission computes it.
    const early = client.submitWith({ key: "shared" }, "inc", 10); // same batch, own message
    const failing = client.compute({
      shared: ["inc", 10],
      huge: ["concat", [Array.from({ length: 10_000 }, (_, i) => i)]],
    });
    expect(await failing.huge.catch((e: unknown) => (e as Error).name)).toBe(
      "MessageTooLargeError",
    );
    expect(await early).toBe(11);
    expect(await failing.shared).toBe(11);
    expect(typeof (await request).tasks).toBe("number"); // its batch went on without the graph
    expect(await client.submit("inc", 41)).toBe(42);
    // More tasks than msgpack's map16 can count, in one graph: the scheduler
    // holds all of them, and those past the 65,535th compute right. The rest are
    // cancelled (one cancel of 65,900 keys) rather than computed, which took
    // 13 s of this test's 16 and proved nothing more about the graph's message.
    const wide = await Client.connect(cluster.address, { logger: silent });
    toClose.push(wide);
    const futures = wide.map(
      "inc",
      Array.from({ length: 66_000 }, (_, i) => i),
      { pure: false },
    );
    await wide.counters(); // sent after the graph: answered once the scheduler holds it
    const tasks = cluster.scheduler.state.tasks;
    expect(futures.filter((f) => tasks.has(f.key))).toHaveLength(66_000);
    await wide.cancel(futures.slice(0, 65_900));
    const last = (await wide.gather(futures.slice(65_900))) as number[];
    expect(last).toEqual(Array.from({ length: 100 }, (_, i) => 65_901 + i));
  });

  it("a client or a worker given a worker's address for the scheduler's fails at once", async () => {
    const cluster = await benchCluster("tcp");
    const workerAddress = cluster.workers[0].address;
    const started = performance.now();
    // The worker's data server closes the connection: no waiting for a registration
    // answer that never comes (it took the whole timeout, then said "timed out").
    await expect(
      Client.connect(workerAddress, { logger: silent, timeoutMs: 20_000 }),
    ).rejects.toThrow(/closed the connection instead of answering register-client/);
    await expect(
      Worker.create({
        scheduler: workerAddress,
        listen: "tcp://127.0.0.1:0",
        nthreads: 1,
        executor: "inline",
        taskModules: [BENCH_TASKS],
        connectTimeoutMs: 20_000,
        logger: silent,
      }),
    ).rejects.toThrow(/closed the connection instead of answering register-worker/);
    expect(performance.now() - started).toBeLessThan(10_000);
    // The worker serves its peers as before.
    const client = await cluster.client();
    expect(await client.submit("inc", 1)).toBe(2);
  }, 60_000);

  it("a LocalCluster on TCP computes what it computes in process", async () => {
    const cluster = await benchCluster("tcp", true);
    expect(cluster.address).toMatch(/^tcp:/);
    for (const w of cluster.workers) expect(w.address).toMatch(/^tcp:/);
    const client = await cluster.client();
    await computeEverything(client, "local-tcp-");
    expect((await client.counters()).keysTransferred).toBeGreaterThan(0);
    cluster.validateState();
  });

  it("arguments arrive as they were sent, whichever the transport", async () => {
    const values: unknown[] = [
      -0,
      [0, -0, Number.NaN, -Infinity, 2 ** 53 + 2],
      { z: -0, n: null, u: undefined, big: 2n ** 70n, neg: -(2n ** 65n) },
      new Map<unknown, unknown>([
        [{ a: 1 }, "object key"],
        [1, -0],
      ]),
      new Set([1, "a", { b: 2 }]),
      [new Date(0), new Float64Array([1.5, -0]), new Uint8Array([1, 2])],
      "a\u0000b ζ😀",
      // Large enough to travel as out-of-band buffers (a view with an offset among them).
      [
        Float64Array.from({ length: 20_000 }, (_, i) => i - 0.5),
        new Int16Array(new ArrayBuffer(200_008), 8, 100_000).fill(-3),
        Buffer.alloc(100_000, 7),
        new Uint8Array(100_000).fill(1).buffer,
      ],
    ];
    for (const protocol of ["inproc", "tcp"] as const) {
      const client = await (await benchCluster(protocol)).client();
      for (const v of values) {
        // concat([[v]]) is [v]: the value as the task received it.
        const got = await client.submitWith({ pure: false }, "concat", [[v]]);
        expect(got, `${protocol}: ${String(v)}`).toStrictEqual([v]);
      }
    }
  });
});
