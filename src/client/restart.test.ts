import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { listen } from "../comm/connect.ts";
import { wireVersion } from "../protocol/version.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Worker } from "../worker/worker.ts";
import { Client } from "./client.ts";
import { CancelledError, RestartTimeoutError, WorkersTimeoutError } from "./errors.ts";
import {
  CLIENT_TEST_TASKS,
  closeTestClusters,
  eventually,
  extraWorker,
  testCluster,
} from "./testCluster.ts";
import { inc, slowInc } from "./testTasks.ts";

const silent = pino({ level: "silent" });
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await closeTestClusters();
});

describe("Client.restart", () => {
  it("cancels every client's futures, forgets every task, and starts new workers", async () => {
    const { cluster, client } = await testCluster();
    const other = await cluster.client();
    const done = client.submit(inc, 1);
    expect(await done).toBe(2);
    const running = client.submit(slowInc, 1, 60_000);
    const theirs = other.submit(slowInc, 2, 60_000);
    await client.publishDataset("ds", [done]);
    await eventually(() => cluster.scheduler.state.tasks.get(running.key)?.state === "processing");
    const before = cluster.workers.map((w) => w.address);
    const old = [...cluster.workers];

    await client.restart();

    for (const f of [done, running, theirs]) {
      expect(f.status).toBe("cancelled");
      await expect(f.result()).rejects.toThrow(CancelledError);
      await expect(f.result()).rejects.toThrow(/the cluster restarted/);
    }
    expect(cluster.scheduler.state.tasks.size).toBe(0);
    expect(await client.listDatasets()).toEqual([]);
    for (const w of old) {
      expect(w.status).toBe("closed");
      expect(w.restartRequested).toBe(true);
      expect(w.fault).toBeNull();
    }
    const after = (await client.workers()).map((w) => w.address);
    expect(after).toHaveLength(2);
    for (const a of after) expect(before).not.toContain(a);
    expect(cluster.workers.map((w) => w.address).sort()).toEqual([...after].sort());
    // Each new worker has the name of the one it replaces, as under a nanny.
    expect((await client.workers()).map((w) => w.name).sort()).toEqual(["0", "1"]);
    // The same keys compute again, on the new workers.
    expect(await client.submit(inc, 1)).toBe(2);
    expect(await other.submit(inc, 10)).toBe(11);
    expect((await client.scatter([5]))[0]?.key).toBeDefined();
  });

  it("with waitForWorkers false, resolves once the scheduler has restarted", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    await client.restart({ waitForWorkers: false });
    expect(cluster.scheduler.state.tasks.size).toBe(0);
    await client.waitForWorkers(1, { timeoutMs: 10_000 });
    expect(await client.submit(inc, 41)).toBe(42);
  });

  it("a cluster restarts again and again, and rejects bad options", async () => {
    const { client } = await testCluster({ workers: 1 });
    for (let i = 0; i < 3; i++) {
      await client.restart();
      expect(await client.submit(inc, i)).toBe(i + 1);
    }
    await expect(client.restart({ timeoutMs: -1 })).rejects.toThrow(/timeoutMs must be/);
    // The message says the bound it enforces: no timer runs longer.
    await expect(client.restart({ timeoutMs: 2 ** 31 })).rejects.toThrow(
      "restart: timeoutMs must be a number of milliseconds > 0 and at most 2147483647, got 2147483648",
    );
    // 0 is refused before anything is sent: the restart would be asked for, then
    // said unanswered (the scheduler "not running?") while it restarted the cluster.
    const before = await client.counters();
    await expect(client.restartWorkers(["0"], { timeoutMs: 0 })).rejects.toThrow(
      "restartWorkers: timeoutMs must be a number of milliseconds > 0 and at most 2147483647, got 0",
    );
    await expect(client.restart({ timeoutMs: 0 })).rejects.toThrow(/timeoutMs must be .* > 0/);
    expect((await client.counters()).workers).toBe(before.workers);
    await expect(client.restart({ waitForWorkers: "yes" as never })).rejects.toThrow(
      /waitForWorkers must be a boolean/,
    );
  });

  it("a worker without a nanny closes for good, and the restart times out saying why", async () => {
    const scheduler = await Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: silent });
    cleanups.push(() => scheduler.close());
    const worker = await Worker.create({
      scheduler: scheduler.address,
      executor: "inline",
      taskModules: [CLIENT_TEST_TASKS],
      logger: silent,
    });
    cleanups.push(() => worker.close());
    const client = await Client.connect(scheduler.address, { logger: silent });
    cleanups.push(() => client.close());
    const f = client.submit(inc, 1);
    expect(await f).toBe(2);
    const err = await client.restart({ timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RestartTimeoutError);
    expect(err).toBeInstanceOf(WorkersTimeoutError);
    expect((err as Error).message).toMatch(
      /waited 300 ms for 1 worker\(s\) to come back after the restart, but only 0 did.*1 of them had no nanny/,
    );
    await worker.closed;
    expect(worker.restartRequested).toBe(true);
    expect(worker.fault).toBeNull();
    await expect(f.result()).rejects.toThrow(CancelledError);
    // A worker started again registers, even at the address the old one had.
    const again = await Worker.create({
      scheduler: scheduler.address,
      listen: worker.address,
      executor: "inline",
      taskModules: [CLIENT_TEST_TASKS],
      logger: silent,
    });
    cleanups.push(() => again.close());
    expect(again.address).toBe(worker.address);
    expect(await client.submit(inc, 1)).toBe(2);
  });

  it("restartWorkers restarts the named workers only; their results are computed again", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const [first, second] = cluster.workers;
    const held = client.submitWith({ workers: first.address, allowOtherWorkers: true }, inc, 1);
    const elsewhere = client.submitWith({ workers: second.address }, inc, 2);
    expect(await held).toBe(2);
    expect(await elsewhere).toBe(3);
    const loose = await extraWorker(cluster);
    cleanups.push(() => loose.close());
    // The first by its name ("0": LocalCluster names its workers by their count).
    const name = (await client.workers()).find((w) => w.address === first.address)?.name;
    expect(name).toBe("0");
    const answer = await client.restartWorkers(["0", loose.address, "tcp://10.9.9.9:1"]);
    expect(answer).toEqual({
      restarted: [first.address],
      failed: [
        { worker: loose.address, reason: "it has no nanny to start it again" },
        { worker: "tcp://10.9.9.9:1", reason: "no connected worker matches it" },
      ],
    });
    expect(first.restartRequested).toBe(true);
    expect(cluster.workers).not.toContain(first);
    expect(cluster.workers).toContain(second);
    // The other result stayed; the lost one is computed again, on another worker.
    expect(elsewhere.status).toBe("finished");
    expect(await client.gather(held)).toBe(2);
    expect((await client.workers()).length).toBe(4);
    await expect(client.restartWorkers([])).rejects.toThrow(/workers must be a non-empty array/);
  });
});

describe("a scheduler that stops answering", () => {
  it("holds restart, restartWorkers and waitForWorkers no longer than their timeouts", async () => {
    // Registers the client, then reads and answers nothing, as a stopped process would.
    const listener = await listen("tcp://127.0.0.1:0", (comm) => {
      void (async () => {
        await comm.recv();
        await comm.send({ op: "register-client-reply", status: "OK", ...wireVersion() });
        for await (const _ of comm) {
          // no answer
        }
      })().catch(() => {});
    });
    cleanups.push(() => listener.close());
    const client = await Client.connect(listener.address, { logger: silent });
    cleanups.push(() => client.close());
    const started = Date.now();
    await expect(client.restart({ timeoutMs: 300 })).rejects.toThrow(
      "restart: the scheduler did not answer within the timeout (300 ms): is it still running?",
    );
    await expect(client.restartWorkers(["w"], { timeoutMs: 300 })).rejects.toThrow(
      /^restartWorkers: the scheduler did not answer within the timeout \(300 ms\)/,
    );
    const unanswered = await client.waitForWorkers(1, { timeoutMs: 300 }).catch((e) => e);
    expect(unanswered).toBeInstanceOf(WorkersTimeoutError);
    // Not "only 0 of 1 workers running": the scheduler told nothing.
    expect((unanswered as Error).message).toBe(
      "waitForWorkers: the scheduler did not answer within the timeout (300 ms), so how many of the 1 workers wanted run is not known: is it still running?",
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
