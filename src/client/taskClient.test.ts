import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../cli/commands/contactAddress.ts";
import { testTls } from "../comm/testTls.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import type { RunControl } from "../worker/executor.ts";
import { PiscinaExecutor } from "../worker/piscinaExecutor.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import { getClient, workerClient } from "./taskClient.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "./testCluster.ts";
import { clientScheduler, closesItsClient, fib, returnsFuture, sumOfIncs } from "./testTasks.ts";

afterEach(closeTestClusters);

const NO_SIGNAL = new AbortController().signal;

/** The main thread's side of a run on a pool thread, which makes a client of its own. */
const control: RunControl = {
  secede: () => {},
  rejoin: async () => {},
  client: () => Promise.reject(new Error("the pool threads have their own")),
};

/** A pool of one thread (plus spares) running the client test tasks, whose clients go to `scheduler`. */
function threadPool(
  scheduler: string,
  o: { idleTimeoutMs?: number; connectTimeoutMs?: number } = {},
): Promise<PiscinaExecutor> {
  return PiscinaExecutor.start({ nthreads: 1, taskModules: [CLIENT_TEST_TASKS], scheduler, ...o });
}

async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("getClient and workerClient: tasks that submit tasks", () => {
  for (const executor of ["inline", "threads"] as const) {
    for (const protocol of ["inproc", "tcp", "tls"] as const) {
      it(`a task's client reaches the cluster running it (${executor}, ${protocol})`, async () => {
        const tls = protocol === "tls" ? { tls: testTls() } : {};
        // One worker with the threads: its pool thread loads the client's modules, some
        // 2 s of CPU through tsx, and a second worker's would check nothing more.
        const workers = executor === "threads" ? 1 : 2;
        const { cluster, client } = await testCluster({ executor, protocol, workers, ...tls });
        // Every task of the recursion waits on two others: one thread a worker would
        // deadlock on the first wait without the secession workerClient does.
        expect(await client.submit(fib, 7)).toBe(13);
        expect(await client.submit(sumOfIncs, 20)).toBe(210);
        expect(await client.submitWith({ pure: false }, clientScheduler)).toBe(cluster.address);
        // The clients of the workers' tasks are the scheduler's clients too.
        const { clients } = await client.counters();
        expect(clients).toBeGreaterThan(1);
      });
    }
  }

  for (const executor of ["threads", "inline"] as const) {
    it(`the futures a task let go of release their keys once the worker is quiet (${executor})`, async () => {
      // V8 collects on allocation, and the futures are released by the collector:
      // an idle thread held their results on the cluster for good.
      const { cluster, client } = await testCluster({ workers: 1, executor });
      expect(await client.submit(sumOfIncs, 20)).toBe(210);
      const incs = () =>
        [...cluster.scheduler.state.tasks.keys()].filter((k) => k.startsWith("inc-"));
      await until(() => incs().length === 0, 15_000);
    });
  }

  it("a future a task returns is awaited, its value the result; a future inside the result fails the task", async () => {
    const { client } = await testCluster({ workers: 1 });
    expect(await client.submit(returnsFuture, 5, false)).toBe(6);
    await expect(client.submit(returnsFuture, 5, true)).rejects.toThrow(
      /DataCloneError: result of task returnsFuture-\w+ cannot be cloned: result\.f is a Future \(an instance of a class/,
    );
  });

  for (const executor of ["inline", "threads"] as const) {
    it(`a task client that task code closed is replaced at the next getClient() (${executor})`, async () => {
      const { client } = await testCluster({ workers: 1, executor });
      expect(await client.submit(closesItsClient)).toBe(1);
      // The tasks after it on the worker still reach the cluster.
      expect(await client.submit(sumOfIncs, 5)).toBe(15);
    });
  }

  it("a recursion far deeper than the pool's threads runs on them: a waiting task lends its thread", async () => {
    // 1 worker × 1 thread and no thread beyond it (the pool's maximum): fib(9)
    // makes the tasks fib(9) … fib(0) (pure: one a key), fib(9) … fib(2) each
    // waiting for two others, eight at once.
    const { client, cluster } = await testCluster({
      workers: 1,
      executor: "threads",
      worker: { maxSecededThreads: 0 },
    });
    const since = Date.now() / 1000;
    expect(await client.submit(fib, 9)).toBe(34);
    const runs = await client.getTaskStream({ since });
    expect(runs).toHaveLength(10);
    expect(new Set(runs.map((r) => r.worker))).toEqual(new Set([cluster.workers[0]?.address]));
  }, 60_000);

  it("a pool thread's client goes with the thread", async () => {
    const { cluster } = await testCluster({ workers: 0 });
    const executor = await threadPool(cluster.address, { idleTimeoutMs: 200 });
    try {
      const clients = () => cluster.scheduler.router.clients.size;
      const before = clients();
      const earlier = new Set(cluster.scheduler.router.clients.keys());
      // Two at once: the second runs on a thread started for it, ended once idle.
      // Each thread's client is told apart by its id, not by both being connected at
      // once: on a loaded machine the second thread may start after the first's task
      // has ended.
      const runs = [0, 1].map((i) =>
        executor.run({ key: `k${i}`, fn: "clientScheduler", args: [1500] }, control, NO_SIGNAL),
      );
      const seen = new Set<string>();
      let over = false;
      const all = Promise.all(runs).finally(() => {
        over = true;
      });
      while (!over) {
        for (const id of cluster.scheduler.router.clients.keys()) {
          if (!earlier.has(id)) seen.add(id);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      const outcomes = await all;
      for (const o of outcomes) expect(o).toMatchObject({ status: "ok" });
      expect(new Set(outcomes.map((o) => o.threadId)).size).toBe(2);
      expect(seen.size).toBe(2);
      await until(() => executor.threadCount === 1);
      await until(() => clients() === before + 1);
    } finally {
      await executor.close();
    }
    await until(() => cluster.scheduler.router.clients.size === 1);
  });

  it("a cluster whose pool threads' tasks made clients closes without a warning", async () => {
    const { logger, records } = memoryLogger();
    const { cluster, client } = await testCluster({
      workers: 1,
      executor: "threads",
      protocol: "tcp",
      logger,
    });
    expect(await client.submit(sumOfIncs, 20)).toBe(210);
    await client.close();
    await cluster.close();
    const loud = records.filter((r) => (r.level as number) >= 40);
    expect(loud.map((r) => `${String(r.msg)}: ${JSON.stringify(r.err ?? r.reason ?? "")}`)).toEqual(
      [],
    );
  }, 60_000);

  it("a pool thread's client that cannot connect fails its task, saying why as a main-thread client would", async () => {
    // Nothing listens on port 1.
    const executor = await threadPool("tcp://127.0.0.1:1", { connectTimeoutMs: 1_000 });
    try {
      const outcome = await executor.run(
        { key: "k", fn: "clientScheduler", args: [] },
        control,
        NO_SIGNAL,
      );
      expect(outcome.status).toBe("error");
      const error = (outcome as { error: { exceptionText: string } }).error;
      // Refused, so tried again (ECONNREFUSED crossed from the main thread) until the timeout.
      expect(error.exceptionText).toBe(
        "ConnectError: connection to tcp://127.0.0.1:1 refused (ECONNREFUSED): still refused after 1000 ms",
      );
    } finally {
      await executor.close();
    }
  });

  it("a pool thread's client waits for a scheduler that starts a little late, as a main-thread client does", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const executor = await threadPool(address, { connectTimeoutMs: 20_000 });
    let scheduler: Scheduler | null = null;
    try {
      const outcome = executor.run(
        { key: "k", fn: "clientScheduler", args: [] },
        control,
        NO_SIGNAL,
      );
      await sleep(500); // the thread's client is refused meanwhile
      scheduler = await Scheduler.start({ listen: address, logger: pino({ level: "silent" }) });
      expect(await outcome).toMatchObject({ status: "ok", value: address });
    } finally {
      await executor.close();
      await scheduler?.close();
    }
  }, 30_000);

  it("outside a task, getClient and workerClient say so", async () => {
    await expect(getClient()).rejects.toThrow(
      /getClient\(\) must be called from inside a running task/,
    );
    await expect(workerClient(async () => 1)).rejects.toThrow(
      /^workerClient\(\) must be called from inside a running task/,
    );
  });
});
