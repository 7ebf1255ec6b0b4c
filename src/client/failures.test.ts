import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { connect, listen } from "../comm/connect.ts";
import { serveRpc } from "../comm/rpc.ts";
import { wireVersion } from "../protocol/version.ts";
import { ExecuteSuccessEvent } from "../worker/state/events.ts";
import type { Worker } from "../worker/worker.ts";
import { Client } from "./client.ts";
import { CancelledError, NoWorkerError, RemoteTaskError } from "./errors.ts";
import {
  closeTestClusters,
  eventually,
  extraWorker,
  knownKeys,
  testCluster,
} from "./testCluster.ts";
import {
  add,
  boom,
  bytes,
  flaky,
  inc,
  slowInc,
  sum,
  uncloneable,
  unreadableError,
  unreadableThen,
} from "./testTasks.ts";

afterEach(closeTestClusters);

describe("failures reach the client", () => {
  it("a task error carries its message and remote stack, and the cluster stays usable", async () => {
    const { client } = await testCluster();
    const bad = client.submit(boom, "it broke");
    const err = await bad.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RemoteTaskError);
    const e = err as RemoteTaskError;
    expect(e.message).toBe(`task ${bad.key} failed: ValueError: it broke`);
    expect(e.remoteName).toBe("ValueError");
    expect(e.remoteMessage).toBe("it broke");
    expect(e.exceptionText).toBe("ValueError: it broke");
    expect(e.tracebackText).toMatch(/testTasks\.ts/);
    expect(e.stack).toMatch(
      /^RemoteTaskError: task boom-\w+ failed: ValueError: it broke\n\s+at .*testTasks\.ts/,
    );
    expect(bad.status).toBe("error");
    expect(await bad.exception()).toBe(e);

    // A dependent fails with the same error, blaming the task that raised.
    const dependent = client.submit(add, bad, 1);
    const dep = (await dependent.catch((x: unknown) => x)) as RemoteTaskError;
    expect(dep).toBeInstanceOf(RemoteTaskError);
    expect(dep.blame).toBe(bad.key);
    expect(dep.message).toMatch(
      /failed \(because its dependency boom-\w+ failed\): ValueError: it broke/,
    );

    // The cluster goes on computing.
    expect(await client.gather(client.map(inc, [1, 2, 3]))).toEqual([2, 3, 4]);
    expect(await client.get({ a: ["inc", 1], b: ["add", "a", "a"] })).toEqual({ b: 4 });
  });

  it("a task error with an empty message is its name alone, as Python's format_exception_only gives it", async () => {
    const { client } = await testCluster();
    const bad = client.submit(boom, "");
    const e = (await bad.catch((x: unknown) => x)) as RemoteTaskError;
    expect(e).toBeInstanceOf(RemoteTaskError);
    expect([e.exceptionText, e.remoteName, e.remoteMessage]).toEqual([
      "ValueError",
      "ValueError",
      "",
    ]);
    expect(e.message).toBe(`task ${bad.key} failed: ValueError`);
  });

  it("a task whose inputs exceed its worker's memory limit fails with MemoryError instead of killing workers", async () => {
    const { client } = await testCluster({ workers: 1, worker: { memoryLimit: 1_000_000 } });
    const parts = client.map(bytes, [600_000, 600_001]);
    await client.gather(parts);
    // By name: add is typed for numbers, and never runs here.
    const joined = client.submit("add", parts[0], parts[1]);
    const err = (await joined.catch((e: unknown) => e)) as RemoteTaskError;
    expect(err).toBeInstanceOf(RemoteTaskError);
    expect(err.remoteName).toBe("MemoryError");
    expect(err.message).toMatch(
      /Task add-\w+ has 1\.14 MiB worth of input dependencies, but worker inproc:\/\/\S+ has memory_limit set to 0\.95 MiB\./,
    );
    // The worker lives on.
    expect(await client.submit(inc, 1)).toBe(2);
  });

  it("an invalid graph (a cycle) fails its keys with a clear error", async () => {
    const { client } = await testCluster();
    const futures = client.compute({ a: ["inc", "b"], b: ["inc", "a"] }, { keys: ["a"] });
    await expect(futures.a).rejects.toThrow(/InvalidGraph: update-graph rejected: cycle/);
  });

  it("retries a failing task as often as asked", async () => {
    const { client } = await testCluster();
    const ok = client.submitWith({ retries: 2 }, flaky, "twice", 2, 42);
    expect(await ok).toBe(42);
    const notEnough = client.submitWith({ retries: 1 }, flaky, "thrice", 3, 42);
    await expect(notEnough).rejects.toThrow(/attempt 2 of thrice failed/);
    const graph = await client.get({ x: ["flaky", "graph", 1, 7] }, { retries: 1 });
    expect(graph).toEqual({ x: 7 });
  });

  it("a task needing a resource no worker has is reported instead of hanging", async () => {
    const { client } = await testCluster();
    const gpu = client.submitWith({ resources: { GPU: 1 } }, inc, 1);
    const err = (await gpu.catch((e: unknown) => e)) as NoWorkerError;
    expect(err).toBeInstanceOf(NoWorkerError);
    expect(err.key).toBe(gpu.key);
    expect(err.reason).toMatch(/GPU/);
    expect(gpu.status).toBe("no-worker");
    // A task waiting for it is told too, naming the task held up.
    const after = client.submit(add, gpu, 1);
    const err2 = (await after.catch((e: unknown) => e)) as NoWorkerError;
    expect(err2).toBeInstanceOf(NoWorkerError);
    expect(err2.task).toBe(gpu.key);
    expect(err2.message).toMatch(/no worker can run .*, which .* needs/);
    const graph = client.compute({ g: ["inc", 1] }, { resources: { GPU: 2 } });
    await expect(graph.g).rejects.toThrow(NoWorkerError);
    // Other work goes on.
    expect(await client.submit(inc, 10)).toBe(11);
  });

  it("a no-worker future waits again, and finishes, once a suitable worker joins", async () => {
    const { cluster, client } = await testCluster();
    const gpu = client.submitWith({ resources: { GPU: 1 } }, slowInc, 1, 300);
    const after = client.submit(add, gpu, 1);
    await expect(after).rejects.toThrow(NoWorkerError);
    expect(gpu.status).toBe("no-worker");
    const worker = await extraWorker(cluster, { resources: { GPU: 1 } });
    try {
      // The scheduler tells the client the task can run: the futures wait again.
      await eventually(() => after.status === "pending", 5_000, "pending again");
      expect(gpu.status).toBe("pending");
      expect(await after).toBe(3);
      expect(await gpu).toBe(2);
    } finally {
      await worker.close();
    }
  });

  it("a result awaited from a worker gone silent comes from where it is computed again", async () => {
    const { cluster, client } = await testCluster({ scheduler: { workerTtlMs: 600 } });
    // A worker that computes one task, then goes silent as a frozen process does:
    // no heartbeats, its connections open, get_data never answered.
    const listener = await listen("inproc://frozen", (comm) => {
      void serveRpc(comm, { get_data: () => new Promise(() => {}) });
    });
    const stream = await connect(cluster.address);
    await stream.send({
      op: "register-worker",
      address: listener.address,
      nthreads: 1,
      resources: { F: 1 },
      stimulusId: "reg-frozen",
      ...wireVersion(),
    });
    await stream.recv(); // the reply
    try {
      const x = client.submitWith({ resources: { F: 1 }, pure: false }, inc, 1);
      const compute = (await stream.recv()) as { op: string; key: string; runId: number }[];
      expect(compute[0]).toMatchObject({ op: "compute-task", key: x.key });
      await stream.send([
        {
          op: "task-finished",
          key: x.key,
          runId: compute[0].runId,
          nbytes: 8,
          typename: "number",
          stimulusId: "done",
        },
      ]);
      await eventually(() => x.status === "finished", 5_000, "x finished");
      const result = x.result(); // asks the silent worker, which never answers
      const healthy = await extraWorker(cluster, { resources: { F: 1 }, heartbeatIntervalMs: 100 });
      try {
        // Removed at its TTL, x is computed again on the healthy worker.
        const hung = sleep(10_000).then(() => "still waiting for the silent worker");
        expect(await Promise.race([result, hung])).toBe(2);
      } finally {
        await healthy.close();
      }
    } finally {
      stream.abort();
      await listener.close();
    }
  });

  it("a dependent submitted before its input is reported unrunnable is told too", async () => {
    const { client } = await testCluster();
    // Both submitted in one turn: the dependent reaches the scheduler after its
    // input went to no-worker, before the client heard of it. 0 of a resource
    // no worker declares is as unrunnable as 1.
    const g = client.submitWith({ resources: { GPU: 0 } }, inc, 1);
    const dep = client.submit(add, g, 1);
    await expect(g).rejects.toThrow(NoWorkerError);
    const err = (await dep.catch((e: unknown) => e)) as NoWorkerError;
    expect(err).toBeInstanceOf(NoWorkerError);
    expect(err.task).toBe(g.key);
    expect(err.reason).toBe("no running worker provides resource 'GPU' (the task needs 0)");
    expect(await client.submit(inc, 10)).toBe(11);
  });

  it("cancelling a running graph frees its keys on every worker", async () => {
    const { cluster, client } = await testCluster();
    const graph: Record<string, unknown[]> = {};
    const parts: string[] = [];
    for (let i = 0; i < 12; i++) {
      graph[`slow-${i}`] = ["slowInc", i, 40];
      parts.push(`slow-${i}`);
    }
    graph.total = ["sum", parts];
    const futures = client.compute(graph, { keys: ["total", "slow-0"] });
    await futures["slow-0"]; // running: some inputs done, others computing
    expect(knownKeys(cluster).workers.flat().length).toBeGreaterThan(0);
    await client.cancel(Object.values(futures));
    const err = await futures.total.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CancelledError);
    expect((err as CancelledError).reason).toMatch(/cancelled by client/);
    expect(futures.total.status).toBe("cancelled");
    await eventually(
      () => {
        const known = knownKeys(cluster);
        return known.scheduler.length === 0 && known.workers.every((keys) => keys.length === 0);
      },
      5_000,
      "every key is forgotten",
    );
    for (const w of cluster.workers) expect(w.state.data.size).toBe(0);
    // Usable afterwards, and the same keys compute again.
    expect(await client.get({ a: ["slowInc", 1, 1], b: ["sum", ["a", "a"]] })).toEqual({ b: 4 });
    const again = client.compute(graph, { keys: ["total"] });
    expect(await again.total).toBe(12 + (11 * 12) / 2);
  });

  it("cancelling one future cancels what depends on it", async () => {
    const { client } = await testCluster();
    const x = client.submit(slowInc, 1, 200);
    const y = client.submit(sum, [x, 1]);
    await x.cancel();
    await expect(x).rejects.toThrow(CancelledError);
    await expect(y).rejects.toThrow(CancelledError);
  });

  it("after cancel() resolves the futures are cancelled; a key submitted again starts afresh", async () => {
    const { cluster, client } = await testCluster();
    const x = client.submit(inc, 41);
    expect(await x).toBe(42);
    await client.cancel(x);
    expect(x.status).toBe("cancelled");
    await expect(client.gather([x])).rejects.toThrow(CancelledError);
    // Cancelled and submitted again before the scheduler answered the cancel:
    // its answer is not about the new submission.
    const slow = client.submit(slowInc, 1, 30);
    const cancelling = client.cancel(slow);
    const again = client.submit(slowInc, 1, 30);
    await cancelling;
    expect(slow.status).toBe("pending");
    expect(await again).toBe(2);
    expect(slow.status).toBe("finished");
    again.release();
    slow.release();
    await eventually(() => cluster.scheduler.state.tasks.size === 0, 5_000, "forgotten");
  });

  it("cancels made at once all resolve: each is answered on its own", async () => {
    const { client } = await testCluster();
    const fs = [1, 2, 3].map((i) => client.submit(slowInc, i, 1_000));
    await Promise.all(fs.map((f) => f.cancel()));
    expect(fs.map((f) => f.status)).toEqual(["cancelled", "cancelled", "cancelled"]);
    const done = client.submit(inc, 10);
    await done;
    await Promise.all([client.cancel(done), client.cancel(done), client.cancel([done, fs[0]])]);
  });

  it("cancel() resolves for a client that never submitted anything", async () => {
    const { cluster, client } = await testCluster();
    const x = client.submit(slowInc, 1, 20);
    const fresh = await cluster.client();
    await fresh.cancel([]);
    await fresh.cancel(x); // a key it does not want: nothing to cancel for it
    expect(await x).toBe(2);
  });

  it("losing a worker mid-graph loses no result: its work is redone elsewhere", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const graph: Record<string, unknown[]> = {};
    const parts: string[] = [];
    for (let i = 0; i < 12; i++) {
      graph[`p-${i}`] = ["slowInc", i, 30];
      parts.push(`p-${i}`);
    }
    graph.total = ["sum", parts];
    const futures = client.compute(graph, { keys: ["total", "p-0"] });
    await futures["p-0"];
    const victim = cluster.workers.find((w) => w.state.tasks.size > 0) ?? cluster.workers[0];
    await victim.close();
    expect(await futures.total).toBe(12 + (11 * 12) / 2);
    expect(await futures["p-0"]).toBe(1); // refetched from wherever it is now
    expect(cluster.scheduler.state.workers.size).toBe(2);
  });

  it("two clients share a key: one releasing or cancelling it does not take it from the other", async () => {
    const { cluster, client } = await testCluster();
    const other = await cluster.client();
    const a = client.submit(slowInc, 1, 50);
    const b = other.submit(slowInc, 1, 50);
    expect(a.key).toBe(b.key);
    await client.cancel(a);
    await expect(a).rejects.toThrow(CancelledError);
    expect(await b).toBe(2);
    b.release();
    await eventually(() => cluster.scheduler.state.tasks.size === 0, 5_000, "forgotten");
  });

  it("a key asked for again in graphs that could not be sent is still cancelled by a forced cancel", async () => {
    const { cluster } = await testCluster({ protocol: "tcp" });
    const a = await Client.connect(cluster.address, {
      logger: pino({ level: "silent" }),
      maxMessageBytes: 10_000,
    });
    const b = await cluster.client();
    try {
      const k = a.compute({ k: ["slowInc", 1, 2_000] }).k;
      // Asked again in two graphs too large to send: neither reaches the scheduler.
      const big = a.compute({
        k: ["slowInc", 1, 2_000],
        big: ["identity", "x".repeat(50_000)],
      }).big;
      const big2 = a.compute({
        k: ["slowInc", 1, 2_000],
        big2: ["identity", "y".repeat(50_000)],
      }).big2;
      await expect(big).rejects.toThrow(/MessageTooLargeError|larger than maxMessageBytes/);
      await expect(big2).rejects.toThrow(/MessageTooLargeError|larger than maxMessageBytes/);
      expect(k.status).toBe("pending");
      const theirs = b.compute({ k: ["slowInc", 1, 2_000] }).k;
      await eventually(
        () => cluster.scheduler.state.tasks.get("k")?.whoWants.size === 2,
        5_000,
        "both want k",
      );
      await b.cancel(theirs, { force: true });
      await expect(k).rejects.toThrow(CancelledError);
    } finally {
      await a.close();
    }
  });

  it("a key whose graph could not be sent, submitted again, is computed: its futures do not keep the old error", async () => {
    const { cluster } = await testCluster({ protocol: "tcp" });
    const client = await Client.connect(cluster.address, {
      logger: pino({ level: "silent" }),
      maxMessageBytes: 10_000,
    });
    try {
      const failed = client.compute({
        k: ["slowInc", 1, 20],
        big: ["identity", "x".repeat(50_000)],
      });
      await expect(failed.k).rejects.toThrow(/larger than maxMessageBytes/);
      // The scheduler never had k: asked for again (the failed future still
      // held), it is computed, and its futures wait for it.
      const again = client.compute({ k: ["slowInc", 1, 20] });
      expect(again.k.status).toBe("pending");
      expect(await again.k).toBe(2);
      expect(await failed.k).toBe(2);
      expect(await client.submit(inc, 1)).toBe(2);
      // In one turn: a graph that cannot be sent asks for j first, one that can be
      // sent asks for it again: j is computed, and fails with neither graph's error.
      const first = client.compute({
        j: ["slowInc", 5, 20],
        big: ["identity", "y".repeat(50_000)],
      });
      const second = client.compute({ j: ["slowInc", 5, 20] });
      await expect(first.big).rejects.toThrow(/larger than maxMessageBytes/);
      expect(await second.j).toBe(6);
      expect(await first.j).toBe(6);
      // Both cannot be sent: j fails (with the last one's error), rather than wait.
      const third = client.compute({
        i: ["slowInc", 6, 20],
        big: ["identity", "z".repeat(50_000)],
      });
      const fourth = client.compute({
        i: ["slowInc", 6, 20],
        big2: ["identity", "w".repeat(50_000)],
      });
      await expect(third.i).rejects.toThrow(/larger than maxMessageBytes/);
      await expect(fourth.i).rejects.toThrow(/larger than maxMessageBytes/);
      // A key released in between is a new record: the first graph's failure is not its.
      const fifth = client.compute({
        h: ["slowInc", 7, 20],
        big: ["identity", "v".repeat(50_000)],
      });
      fifth.h.release();
      fifth.big.release();
      await Promise.resolve(); // the release is told
      const sixth = client.compute({ h: ["slowInc", 7, 20] });
      expect(await sixth.h).toBe(8);
    } finally {
      await client.close();
    }
  });

  it("another client's forced cancel does not cancel a key submitted again meanwhile", async () => {
    const { cluster, client } = await testCluster();
    const other = await cluster.client();
    const a = client.submit(slowInc, 1, 200);
    const b = other.submit(slowInc, 1, 200);
    await eventually(() => cluster.scheduler.state.tasks.get(a.key)?.whoWants.size === 2);
    // The cancel reaches the scheduler first; `other` asks for the key again before
    // it hears of the cancel, so the notice it gets predates its new request.
    const cancelled = client.cancel(a, { force: true });
    const again = other.submit(slowInc, 1, 200);
    await cancelled;
    await sleep(50); // \`other\` has the notice by now
    await expect(a).rejects.toThrow(CancelledError);
    expect(b.status).toBe("pending");
    expect(await again).toBe(2);
    expect(b.status).toBe("finished");
  });

  it("a value that cannot be cloned fails its task with a clear error (threads)", async () => {
    const { client } = await testCluster({ executor: "threads", workers: 1 });
    const f = client.submit(uncloneable);
    const err = (await f.catch((e: unknown) => e)) as RemoteTaskError;
    expect(err).toBeInstanceOf(RemoteTaskError);
    expect(err.remoteName).toBe("DataCloneError");
    expect(err.message).toMatch(/result of task uncloneable-\w+ cannot be cloned/);
    expect(await client.submit(inc, 1)).toBe(2);
  });

  for (const executor of ["threads", "inline"] as const) {
    it(`an error whose fields cannot be read is reported as the task's error (${executor})`, async () => {
      const { client } = await testCluster({ executor, workers: 1 });
      for (const kind of ["message", "stack", "proxy", "proto"]) {
        const err = (await client.submit(unreadableError, kind).catch((e: unknown) => e)) as Error;
        expect(err, kind).toBeInstanceOf(RemoteTaskError);
        expect(err.message, kind).not.toMatch(/PoolThreadDied/);
        expect(err.message, kind).toMatch(/the task threw a value whose fields cannot be read/);
      }
      expect(await client.submit(inc, 1)).toBe(2);
    });

    it(`a result whose then cannot be read fails its task with the reading's error, as a promise would (${executor})`, async () => {
      const { client } = await testCluster({ executor, workers: 1 });
      const expected = {
        getter: "Error: then getter",
        revoked: "TypeError: Cannot perform 'get' on a proxy that has been revoked",
      };
      for (const [kind, text] of Object.entries(expected)) {
        const err = (await client.submit(unreadableThen, kind).catch((e: unknown) => e)) as Error;
        expect(err, kind).toBeInstanceOf(RemoteTaskError);
        expect((err as RemoteTaskError).exceptionText, kind).toBe(text);
      }
      expect(await client.submit(inc, 1)).toBe(2);
    });
  }
});

describe("a LocalCluster replaces a worker that stops on a fault", () => {
  /** A stimulus the worker state machine rejects (a result for a task it never had): a bug's stand-in. */
  const breakWorker = (w: Worker) =>
    w.handleStimulus(ExecuteSuccessEvent.dummy("never-given", { stimulusId: "test-fault" }));

  it("a worker whose state machine fails is replaced in its slot, and the graph completes", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    const victim = cluster.workers[0];
    const parts = Array.from({ length: 8 }, (_, i) => client.submit(slowInc, i, 20));
    const total = client.submit(sum, parts);
    await sleep(30);
    breakWorker(victim);
    await eventually(
      () => cluster.workers[0] !== victim && cluster.workers[0].status === "running",
      10_000,
      "a replacement worker",
    );
    expect(victim.fault).toMatch(/state machine failed/);
    expect(await total).toBe(8 + (7 * 8) / 2);
    await eventually(() => cluster.scheduler.state.workers.size === 2, 5_000, "two workers");
    expect([...cluster.scheduler.state.workers.keys()]).toContain(cluster.workers[0].address);
  });

  it("a worker closed by close() is not replaced", async () => {
    const { cluster } = await testCluster({ workers: 2 });
    const closed = cluster.workers[1];
    await closed.close();
    await sleep(50);
    expect(closed.fault).toBeNull();
    expect(cluster.workers[1]).toBe(closed);
    expect(cluster.scheduler.state.workers.size).toBe(1);
  });

  it("with no worker left running and none to replace it, the cluster closes: futures fail instead of waiting", async () => {
    const { cluster, client } = await testCluster({ workers: 2, maxWorkerRestarts: 0 });
    const pending = client.submit(slowInc, 1, 60_000);
    await sleep(20);
    for (const w of cluster.workers) breakWorker(w);
    await expect(pending).rejects.toThrow(
      /the client was closed: no worker of the LocalCluster is left running/,
    );
    await eventually(() => cluster.scheduler.status === "closed", 5_000, "the cluster closed");
  });

  it("workers closed by close(), the last one included, leave it open: futures wait for a worker scale starts", async () => {
    const { cluster, client } = await testCluster({ workers: 2, maxWorkerRestarts: 0 });
    // One given up on a fault while the other runs: nothing closes yet.
    breakWorker(cluster.workers[0]);
    await eventually(() => cluster.scheduler.state.workers.size === 1, 5_000, "one worker left");
    await cluster.workers[1].close();
    const pending = client.submit(inc, 41);
    await sleep(100);
    expect(cluster.scheduler.status).not.toBe("closed");
    expect(pending.status).toBe("pending");
    await cluster.scale(1);
    expect(await pending).toBe(42);
  });

  it("refuses a negative maxWorkerRestarts", async () => {
    await expect(testCluster({ maxWorkerRestarts: -1 })).rejects.toThrow(
      /maxWorkerRestarts must be an integer ≥ 0, got -1/,
    );
  });
});
