/**
 * The same code over TCP: a scheduler, workers and a client started
 * separately (as `weft scheduler`, `weft worker` and a program would) on
 * tcp://127.0.0.1, and a LocalCluster on TCP, compute graphs that move data
 * between workers.
 */

import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { chainGraph, mapGraph, shuffleGraph, treeGraph } from "../../bench/clusterGraphs.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Worker } from "../worker/worker.ts";
import { Client } from "./client.ts";
import { RemoteTaskError } from "./errors.ts";
import { LocalCluster } from "./localCluster.ts";

const BENCH_TASKS = new URL("../../bench/clusterTasks.ts", import.meta.url).href;
const silent = pino({ level: "silent" });
const toClose: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  for (const x of toClose.splice(0).reverse()) await x.close();
});

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

  it("a LocalCluster on TCP computes what it computes in process", async () => {
    const cluster = await LocalCluster.start({
      protocol: "tcp",
      executor: "inline",
      taskModules: [BENCH_TASKS],
      validate: true,
      logger: silent,
    });
    toClose.push(cluster);
    expect(cluster.address).toMatch(/^tcp:/);
    for (const w of cluster.workers) expect(w.address).toMatch(/^tcp:/);
    const client = await cluster.client();
    await computeEverything(client, "local-tcp-");
    expect((await client.counters()).keysTransferred).toBeGreaterThan(0);
    cluster.validateState();
  });
});
