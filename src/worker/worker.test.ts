import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { taskRef } from "../protocol/messagesTaskSpec.ts";
import { WIRE_PROTOCOL_VERSION, weftVersion, wireVersion } from "../protocol/version.ts";
import { ExecuteSuccessEvent } from "./state/events.ts";
import { FakeScheduler } from "./testScheduler.ts";
import { memoryLogger, testWorker } from "./testWorker.ts";
import { Worker } from "./worker.ts";
import { resolveWorkerOptions } from "./workerOptions.ts";

let sched: FakeScheduler;
const workers: Worker[] = [];

beforeEach(async () => {
  sched = await FakeScheduler.start();
});
afterEach(async () => {
  for (const w of workers.splice(0)) {
    await w.close();
    if (w.state.validate) w.state.validateState();
  }
  await sched.close();
});

async function start(o: Parameters<typeof testWorker>[1] = {}): Promise<Worker> {
  const w = await testWorker(sched.address, o);
  workers.push(w);
  return w;
}

describe.each(["inline", "piscina"] as const)("Worker with the %s executor", (executor) => {
  it("registers with the scheduler", async () => {
    const w = await start({ executor, nthreads: 2, resources: { GPU: 1 } });
    const reg = await sched.waitFor((m) => m.op === "register-worker");
    expect(reg).toMatchObject({ address: w.address, nthreads: 2, resources: { GPU: 1 } });
    expect(w.status).toBe("running");
    expect(w.executorKind).toBe(executor);
    await sched.waitFor((m) => m.op === "heartbeat-worker");
  });

  describe("on one worker, each test's tasks under keys of their own", () => {
    // Started once for the tests that only compute: a worker's start (its pool
    // thread with the piscina executor, ~0.6 s of CPU through tsx) is not what
    // they check, and none leaves it other than it found it but for its own keys.
    let one: { sched: FakeScheduler; w: Worker };
    beforeAll(async () => {
      const s = await FakeScheduler.start();
      one = { sched: s, w: await testWorker(s.address, { executor }) };
    });
    afterAll(async () => {
      await one.w.close();
      one.w.state.validateState();
      await one.sched.close();
    });

    it("computes a task and reports it", async () => {
      const { sched, w } = one;
      const runId = await sched.computeTask(w.address, "inc-1", { fn: "inc", args: [1] });
      const msg = await sched.waitForKey("task-finished", "inc-1");
      expect(msg).toMatchObject({ runId, typename: "number", status: "OK", nbytes: 8 });
      // A "disk-read" may come first: Dask's worker records reading the inputs when it
      // took over 5 ms, which a descheduling on a loaded host does even with none to read.
      const actions = (msg.startstops as { action: string }[]).map((s) => s.action);
      expect(actions.filter((a) => a !== "disk-read")).toEqual(["compute"]);
      expect(w.state.data.get("inc-1")).toBe(2);
      expect(w.state.tasks.get("inc-1")?.state).toBe("memory");
    });

    it("resolves task references to the values of dependencies, at any depth", async () => {
      const { sched, w } = one;
      await sched.computeTask(w.address, "a", { fn: "inc", args: [1] });
      await sched.waitForKey("task-finished", "a");
      await sched.computeTask(
        w.address,
        "b",
        { fn: "identity", args: [{ list: [taskRef("a"), { deep: taskRef("a") }], plain: 5 }] },
        { whoHas: { a: [w.address] } },
      );
      await sched.waitForKey("task-finished", "b");
      expect(w.state.data.get("b")).toEqual({ list: [2, { deep: 2 }], plain: 5 });
    });

    it("keeps structured values (Maps) intact", async () => {
      const { sched, w } = one;
      await sched.computeTask(w.address, "m", { fn: "makeMap", args: [3] });
      await sched.waitForKey("task-finished", "m");
      expect(w.state.data.get("m")).toEqual(
        new Map([
          ["k0", 0],
          ["k1", 1],
          ["k2", 2],
        ]),
      );
    });

    it("a thrown error carries its message and stack", async () => {
      const { sched, w } = one;
      await sched.computeTask(w.address, "x", { fn: "boom", args: ["it broke"] });
      const msg = await sched.waitForKey("task-erred", "x");
      expect(msg.exceptionText).toBe("ValueError: it broke");
      expect(msg.tracebackText).toMatch(/testTasks\.ts/);
      expect(msg.exception).toMatchObject({ name: "ValueError", message: "it broke" });
      expect(String(msg.traceback)).toMatch(/^ValueError: it broke\n/);
      expect(w.state.tasks.get("x")?.state).toBe("error");
    });

    it("an unknown function name fails the task with a clear message", async () => {
      const { sched, w } = one;
      await sched.computeTask(w.address, "unknown", { fn: "noSuchFunction", args: [] });
      const msg = await sched.waitForKey("task-erred", "unknown");
      expect(msg.exceptionText).toMatch(
        /^UnknownTaskFunctionError: unknown task function "noSuchFunction": no task module loaded by this worker defines it \(defined: .*inc/,
      );
    });

    it("an invalid run spec fails the task", async () => {
      const { sched, w } = one;
      await sched.send(w.address, {
        op: "compute-task",
        key: "bad",
        runId: 7,
        whoHas: {},
        nbytes: {},
        priority: [0],
        duration: 1,
        runSpec: { fn: 3, args: [] },
        resourceRestrictions: {},
        actor: false,
        annotations: {},
        spanId: null,
        stimulusId: "s-bad",
      });
      const msg = await sched.waitForKey("task-erred", "bad");
      expect(msg.exceptionText).toBe(
        "TypeError: task bad has an invalid run spec: spec.fn must be a non-empty string",
      );
    });
  });

  it("Reschedule makes the worker ask for rescheduling", async () => {
    const w = await start({ executor });
    await sched.computeTask(w.address, "r", { fn: "reschedule", args: [] });
    await sched.waitForKey("reschedule", "r");
  });

  it("secede lets another task run in the slot; rejoin waits for a free slot", async () => {
    const w = await start({ executor, nthreads: 1 });
    const channel = `weft-test-${executor}-${Math.random()}`;
    await sched.computeTask(w.address, "waiter", { fn: "secedeAndWait", args: [channel] });
    const lr = await sched.waitForKey("long-running", "waiter");
    expect(lr.computeDuration).toBeGreaterThanOrEqual(0);
    // With one thread, this runs only because "waiter" seceded.
    await sched.computeTask(w.address, "signaller", { fn: "signal", args: [channel, "go", 50] });
    await sched.waitForKey("task-finished", "signaller");
    await sched.waitForKey("task-finished", "waiter");
    const waiter = w.state.data.get("waiter") as { message: string; rejoinedAt: number };
    expect(waiter.message).toBe("go");
    // rejoin() waited until the signaller gave its slot back
    expect(waiter.rejoinedAt).toBeGreaterThanOrEqual(w.state.data.get("signaller") as number);
    const story = w.state.story("waiter").map((e) => e.slice(1, 3));
    expect(story).toContainEqual(["executing", "long-running"]);
    expect(story).toContainEqual(["long-running", "memory"]);
  });

  it("a synchronous task that secedes and returns goes long-running, then memory", async () => {
    const w = await start({ executor, nthreads: 1 });
    for (const i of [1, 2, 3]) {
      await sched.computeTask(w.address, `s-${i}`, { fn: "secedeThenReturn", args: [i] });
    }
    for (const i of [1, 2, 3]) await sched.waitForKey("task-finished", `s-${i}`);
    expect([1, 2, 3].map((i) => w.state.data.get(`s-${i}`))).toEqual([10, 20, 30]);
    for (const i of [1, 2, 3]) {
      const story = w.state.story(`s-${i}`).map((e) => e.slice(1, 3));
      expect(story).toContainEqual(["executing", "long-running"]);
      expect(story).toContainEqual(["long-running", "memory"]);
    }
    expect(w.asyncInstructionCount).toBe(0);
  });

  it("close() cancels running tasks and stops", async () => {
    const w = await start({ executor });
    await sched.computeTask(w.address, "slow", { fn: "sleep", args: [60_000, null] });
    while (w.state.tasks.get("slow")?.state !== "executing")
      await new Promise((r) => setTimeout(r, 5));
    const t0 = performance.now();
    const stuck = await w.close(5);
    expect(stuck).toEqual([]);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(w.asyncInstructionCount).toBe(0);
    expect(w.status).toBe("closed");
    await sched.waitFor((m) => m.op === "disconnected");
  });

  it("rejects malformed scheduler messages, logs them, and keeps working", async () => {
    const { logger, records } = memoryLogger();
    const w = await start({ executor, logger });
    await sched.send(
      w.address,
      "not a message",
      { op: "compute-task", key: "k" },
      {
        op: "compute-task",
        key: "k",
        runId: 1,
        whoHas: { d: [] },
        nbytes: { d: 1 },
        priority: [0],
        stimulusId: "s",
      },
      {
        op: "compute-task",
        key: "k",
        runId: 1,
        whoHas: { k: ["x"] },
        nbytes: { k: 1 },
        priority: [0],
        stimulusId: "s",
      },
      { op: "free-keys", keys: "k", stimulusId: "s" },
      { op: "no-such-op", stimulusId: "s" },
    );
    await sched.computeTask(w.address, "ok", { fn: "inc", args: [41] });
    await sched.waitForKey("task-finished", "ok");
    expect(w.state.data.get("ok")).toBe(42);
    expect(w.state.tasks.has("k")).toBe(false);
    const rejected = records.filter(
      (r) => r.msg === "rejected a malformed message from the scheduler",
    );
    expect(rejected).toHaveLength(6);
    const texts = rejected.map((r) => (r.err as { message: string }).message);
    expect(texts).toEqual([
      "a scheduler message must be an object with an op",
      "malformed compute-task message: whoHas must be an object, got nothing",
      'malformed compute-task message: whoHas["d"] lists no worker',
      'malformed compute-task message: task "k" depends on itself',
      'malformed free-keys message: keys must be an array of strings, got string "k"',
      'unknown scheduler op "no-such-op"',
    ]);
    expect(w.status).toBe("running");
  });

  // Found by tools/msgfuzz: the state machine raised the seed's KeyError on such a
  // task the next time it looked for one to run, and the worker closed.
  it("refuses a compute-task restricted to a resource it does not have, and keeps working", async () => {
    const { logger, records } = memoryLogger();
    const w = await start({ executor, logger });
    await sched.send(w.address, {
      op: "compute-task",
      key: "gpu",
      runId: 1,
      whoHas: {},
      nbytes: {},
      priority: [0],
      runSpec: { fn: "inc", args: [1] },
      resourceRestrictions: { GPU: 1 },
      stimulusId: "s",
    });
    await sched.computeTask(w.address, "ok", { fn: "inc", args: [41] });
    await sched.waitForKey("task-finished", "ok");
    await sched.computeTask(w.address, "ok2", { fn: "inc", args: [1] });
    await sched.waitForKey("task-finished", "ok2");
    expect(w.status).toBe("running");
    expect(w.state.tasks.has("gpu")).toBe(false);
    const rejected = records.filter(
      (r) => r.msg === "rejected a malformed message from the scheduler",
    );
    expect(rejected.map((r) => (r.err as { message: string }).message)).toEqual([
      'malformed compute-task message: task "gpu" is restricted to the resource "GPU", which this worker does not have (it has none)',
    ]);
  });

  it("takes a lone message from the scheduler as a batch of one", async () => {
    const w = await start({ executor });
    await sched.computeTask(w.address, "a", { fn: "inc", args: [1] });
    await sched.waitForKey("task-finished", "a");
    await sched.sendFrame(w.address, { op: "free-keys", keys: ["a"], stimulusId: "free-a" });
    for (let i = 0; i < 400 && w.state.tasks.has("a"); i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(w.state.tasks.has("a")).toBe(false);
    expect(w.status).toBe("running");
  });

  it("free-keys releases a result", async () => {
    const w = await start({ executor });
    await sched.computeTask(w.address, "a", { fn: "inc", args: [1] });
    await sched.waitForKey("task-finished", "a");
    await sched.send(w.address, { op: "free-keys", keys: ["a"], stimulusId: "free-a" });
    while (w.state.tasks.has("a")) await new Promise((r) => setTimeout(r, 5));
    expect(w.state.data.has("a")).toBe(false);
  });

  it("a task cancelled, with its dependency freed, in the batch that starts it is no error", async () => {
    const { logger, records } = memoryLogger();
    const w = await start({ executor, logger });
    await sched.computeTask(w.address, "a", { fn: "inc", args: [1] });
    await sched.waitForKey("task-finished", "a");
    // b starts when its compute-task is handled, and the batch's free-keys then cancels
    // it and frees a: the shell starts a cancelled task whose argument is gone.
    const compute = {
      op: "compute-task",
      key: "b",
      runId: 100,
      whoHas: { a: [w.address] },
      nbytes: { a: 8 },
      priority: [0, 100],
      duration: 0.1,
      runSpec: { fn: "identity", args: [taskRef("a")] },
      resourceRestrictions: {},
      actor: false,
      annotations: {},
      spanId: null,
      stimulusId: "compute-b",
    };
    await sched.send(w.address, compute, { op: "free-keys", keys: ["b", "a"], stimulusId: "c" });
    while (w.state.tasks.size > 0) await new Promise((r) => setTimeout(r, 5));
    expect(records.filter((r) => (r.level as number) >= 50)).toEqual([]);
    await sched.computeTask(w.address, "ok", { fn: "inc", args: [41] });
    await sched.waitForKey("task-finished", "ok");
  });

  it("pause stops new tasks until unpause", async () => {
    const w = await start({ executor });
    await sched.send(w.address, { op: "pause", stimulusId: "p" });
    await sched.computeTask(w.address, "a", { fn: "inc", args: [1] });
    await new Promise((r) => setTimeout(r, 100));
    expect(w.status).toBe("paused");
    expect(w.state.tasks.get("a")?.state).toBe("ready");
    await sched.send(w.address, { op: "unpause", stimulusId: "u" });
    await sched.waitForKey("task-finished", "a");
    expect(w.status).toBe("running");
  });
});

describe("Worker paused by the scheduler and by its memory", () => {
  it("resumes only when both let go, and keeps the scheduler told", async () => {
    const memory = { bytes: 0 };
    const w = await start({
      memoryLimit: 1000,
      memoryMeasure: () => memory.bytes,
      memoryMonitorIntervalMs: 5,
    });
    const statusChanges = () =>
      sched.messages((m) => m.op === "worker-status-change").map((m) => m.status);
    const until = async (cond: () => boolean) => {
      const deadline = Date.now() + 5_000;
      while (!cond()) {
        if (Date.now() > deadline) throw new Error(`not within 5 s: ${cond}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    // The scheduler pauses it (retiring it); its memory then runs short too.
    await sched.send(w.address, { op: "pause", stimulusId: "retire" });
    await until(() => w.isPaused);
    memory.bytes = 900;
    await until(() => statusChanges().length === 1);
    expect(w.isPausedForMemory).toBe(true);
    expect(statusChanges()).toEqual(["paused"]);
    // The retirement failed: the scheduler lets go, but memory is still short.
    await sched.send(w.address, { op: "unpause", stimulusId: "retire-failed" });
    await until(() => statusChanges().length === 2);
    expect(statusChanges()).toEqual(["paused", "paused"]);
    expect(w.isPaused).toBe(true);
    await sched.computeTask(w.address, "a", { fn: "inc", args: [1] });
    await new Promise((r) => setTimeout(r, 50));
    expect(w.state.tasks.get("a")?.state).toBe("ready");
    // Memory recovers: it runs again, and says so.
    memory.bytes = 100;
    await sched.waitForKey("task-finished", "a");
    await until(() => statusChanges().length === 3);
    expect(statusChanges()).toEqual(["paused", "paused", "running"]);
    expect(w.status).toBe("running");
    // The other way round: memory short, then the scheduler pauses and lets go.
    memory.bytes = 900;
    await until(() => statusChanges().length === 4);
    await sched.send(w.address, { op: "pause", stimulusId: "retire-2" });
    memory.bytes = 100;
    // The scheduler hears of it (to resume it if the retirement fails), but holds it.
    await until(() => statusChanges().length === 5);
    expect(statusChanges()).toEqual(["paused", "paused", "running", "paused", "running"]);
    expect(w.isPausedForMemory).toBe(false);
    expect(w.isPaused).toBe(true);
    await sched.send(w.address, { op: "unpause", stimulusId: "retire-2-failed" });
    await until(() => !w.isPaused);
    expect(w.state.running).toBe(true);
    // Nothing to tell: the scheduler took it for running when it let go.
    await new Promise((r) => setTimeout(r, 50));
    expect(statusChanges()).toHaveLength(5);
  });
});

describe("Worker, piscina executor specifics", () => {
  it("runs tasks on pool threads, nthreads at once", async () => {
    const w = await start({ executor: "piscina", nthreads: 2 });
    await sched.computeTask(w.address, "t", { fn: "threadId", args: [] });
    await sched.waitForKey("task-finished", "t");
    expect(w.state.data.get("t")).not.toBe(0);
    // Two tasks that can only finish with met=true if they run at the same time: each
    // waits for the other on a BroadcastChannel (no timing assumption but a timeout).
    await sched.computeTask(w.address, "s1", { fn: "meet", args: ["weft-meet-test", 30_000] });
    await sched.computeTask(w.address, "s2", { fn: "meet", args: ["weft-meet-test", 30_000] });
    await sched.waitForKey("task-finished", "s1");
    await sched.waitForKey("task-finished", "s2");
    type Meeting = { threadId: number; met: boolean };
    const s1 = w.state.data.get("s1") as Meeting;
    const s2 = w.state.data.get("s2") as Meeting;
    expect(s1.threadId).not.toBe(s2.threadId);
    expect(s1.met && s2.met).toBe(true);
  });

  it("a result that cannot be cloned fails the task with a clear error", async () => {
    const w = await start({ executor: "piscina" });
    await sched.computeTask(w.address, "u", { fn: "uncloneable", args: [] });
    const msg = await sched.waitForKey("task-erred", "u");
    expect(msg.exceptionText).toMatch(
      /^DataCloneError: result of task u cannot be cloned: result\.callback is a function; task results must be data/,
    );
    // What passes the check but fails the clone all the same fails the same way.
    await sched.computeTask(w.address, "v", { fn: "fickle", args: [] });
    const fickle = await sched.waitForKey("task-erred", "v");
    expect(fickle.exceptionText).toMatch(
      /^DataCloneError: result of task v cannot be cloned: .*could not be cloned/,
    );
    // the thread survived
    await sched.computeTask(w.address, "after", { fn: "inc", args: [1] });
    await sched.waitForKey("task-finished", "after");
  });

  it("a seceded task's pool thread runs the next tasks: no thread is started for them, none deadlocks", async () => {
    // 1 slot, no spare thread: "a" and "b" secede and wait on the one thread,
    // "c" runs there meanwhile; then both rejoin, one after the other. (Before
    // 2026-12-03 each seceded task kept a thread: past the spare threads a task
    // that seceded kept its slot, and "c" waited for "a" or "b", which might wait
    // for it.)
    const w = await start({ executor: "piscina", nthreads: 1, maxSecededThreads: 0 });
    const channel = `weft-test-rejoin-${Math.random()}`;
    for (const k of ["a", "b"]) {
      await sched.computeTask(w.address, k, { fn: "secedeAndWait", args: [channel] });
      await sched.waitForKey("long-running", k);
    }
    await sched.computeTask(w.address, "c", { fn: "inc", args: [1] });
    await sched.waitForKey("task-finished", "c");
    expect(w.state.data.get("c")).toBe(2);
    const bc = new BroadcastChannel(channel);
    bc.postMessage("go");
    bc.close();
    for (const k of ["a", "b"]) await sched.waitForKey("task-finished", k);
    const threads = ["a", "b", "c"].map((k) => w.state.threads.get(k));
    expect(new Set(threads).size).toBe(1);
  }, 30_000);

  it("a task whose thread is stopped by an earlier task's leftover timer is told so", async () => {
    const w = await start({ executor: "piscina" });
    // One thread: the victim starts on it as soon as the early task returns.
    await sched.computeTask(w.address, "early", { fn: "throwLater", args: [300] });
    await sched.computeTask(w.address, "victim", { fn: "sleep", args: [5_000, 1] });
    await sched.waitForKey("task-finished", "early");
    const msg = await sched.waitForKey("task-erred", "victim");
    expect(msg.exceptionText).toMatch(
      /^PoolThreadDied: the pool thread running task victim stopped: Error: uncaught in a timer \(stopped by this task's code, or by code an earlier task left running on that thread/,
    );
    // A new thread takes its place.
    await sched.computeTask(w.address, "after", { fn: "inc", args: [1] });
    await sched.waitForKey("task-finished", "after");
  });

  it("arguments that cannot be cloned fail the task with a clear error", async () => {
    const w = await start({ executor: "piscina" });
    await sched.computeTask(w.address, "f", { fn: "identity", args: [() => 1] });
    const msg = await sched.waitForKey("task-erred", "f");
    expect(msg.exceptionText).toMatch(/^DataCloneError: arguments of task f cannot be cloned: /);
  });
});

describe("Worker, inline executor specifics", () => {
  it("runs tasks on the main thread and keeps results by reference", async () => {
    const w = await start({ executor: "inline" });
    await sched.computeTask(w.address, "t", { fn: "threadId", args: [] });
    await sched.waitForKey("task-finished", "t");
    expect(w.state.data.get("t")).toBe(0);
    const obj = { big: [1, 2, 3] };
    await sched.computeTask(w.address, "same", { fn: "identity", args: [obj] });
    await sched.waitForKey("task-finished", "same");
    expect(w.state.data.get("same")).toBe(obj);
  });
});

describe("Worker lifecycle", () => {
  it("a step of closing that fails is logged, and the rest still closes", async () => {
    const { logger, records } = memoryLogger();
    const w = await testWorker(sched.address, { logger });
    // As piscina's destroy() rejecting would: the close started without waiting
    // (close-worker, a fault) rejected, an unhandled rejection ending the process.
    const executors = (w as unknown as { executors: { close(): Promise<void> } }).executors;
    executors.close = () => Promise.reject(new Error("the pool would not stop"));
    await expect(w.close()).resolves.toEqual([]);
    expect(w.status).toBe("closed");
    await w.closed;
    expect(records.find((r) => r.level === 50)).toMatchObject({
      msg: "closing: the executors failed; closing the rest",
      err: { message: "the pool would not stop" },
    });
  });

  it("fails to start with a clear error when the scheduler refuses", async () => {
    const refusing = await FakeScheduler.start({ refuse: "no room" });
    await expect(testWorker(refusing.address)).rejects.toThrow(
      /refused to register this worker: no room/,
    );
    await refusing.close();
  });

  it("computes what the scheduler sends while it is still starting (its modules loading)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-slow-modules-"));
    try {
      const registry = new URL("./taskRegistry.ts", import.meta.url).href;
      const slow = join(dir, "slow.mjs");
      writeFileSync(
        slow,
        `import { defineTask } from ${JSON.stringify(registry)};\n` +
          "await new Promise((r) => setTimeout(r, 300));\n" +
          'defineTask("slowModule", (x) => x + 100);\n',
      );
      const early = await FakeScheduler.start({
        address: "inproc://early/1",
        taskModules: [`file://${slow}`],
      });
      const starting = testWorker(early.address, { executor: "inline" });
      // Registered, the worker imports the module: the scheduler sends at once.
      const reg = await early.waitFor((m) => m.op === "register-worker");
      await early.computeTask(reg.address as string, "t", { fn: "slowModule", args: [1] });
      const w = await starting;
      workers.push(w);
      await early.waitForKey("task-finished", "t");
      expect(w.state.data.get("t")).toBe(101);
      await early.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("imports the task modules the register reply names, or fails to start saying which", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-reply-modules-"));
    try {
      const registry = new URL("./taskRegistry.ts", import.meta.url).href;
      const good = join(dir, "good.mjs");
      writeFileSync(
        good,
        `import { defineTask } from ${JSON.stringify(registry)};\ndefineTask("fromReply", (x) => x * 3);\n`,
      );
      const bad = join(dir, "bad.mjs");
      writeFileSync(bad, 'throw new Error("no good");\n');
      const url = (p: string) => `file://${p}`;
      const ok = await FakeScheduler.start({
        address: "inproc://modules/1",
        taskModules: [url(good)],
      });
      const w = await testWorker(ok.address, { executor: "piscina" });
      workers.push(w);
      expect(w.taskNames).toContain("fromReply");
      await ok.computeTask(w.address, "t", { fn: "fromReply", args: [5] });
      await ok.waitForKey("task-finished", "t");
      expect(w.state.data.get("t")).toBe(15);
      await ok.close();
      // The reply's URLs are checked before anything is imported: the pool, whose
      // thread costs ~0.6 s of CPU to start, only for the module that fails on it.
      for (const [modules, why, executor] of [
        [
          [url(bad)],
          /cannot import the task modules loaded into the cluster \(file:.*bad\.mjs\): .*no good/,
          "piscina",
        ],
        [
          [url(join(dir, "gone.mjs"))],
          /register reply: no such file on this worker's machine: file:/,
          "inline",
        ],
        [["http://x/y.mjs"], /register reply: not a file URL: http:\/\/x\/y\.mjs/, "inline"],
      ] as const) {
        const refusing = await FakeScheduler.start({
          address: "inproc://modules/2",
          taskModules: modules,
        });
        await expect(testWorker(refusing.address, { executor })).rejects.toThrow(why);
        await refusing.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails to start, and leaves, when the scheduler is of another weft version", async () => {
    const ours = `wire protocol ${WIRE_PROTOCOL_VERSION} (weft ${weftVersion()})`;
    const advice = "run the same weft version on the scheduler, workers and clients";
    const cases = [
      // A scheduler from before the check: its reply has no version.
      [
        {},
        "speaks no wire protocol version, so it runs a weft older than this worker, which speaks",
      ],
      [
        { protocolVersion: WIRE_PROTOCOL_VERSION + 1, weftVersion: "99.0.0" },
        `speaks wire protocol ${WIRE_PROTOCOL_VERSION + 1} (weft 99.0.0) and this worker`,
      ],
    ] as const;
    for (const [i, [replyVersion, what]] of cases.entries()) {
      const other = await FakeScheduler.start({
        address: `inproc://other-version/${i}`,
        replyVersion,
      });
      await expect(testWorker(other.address)).rejects.toThrow(
        new Error(`the scheduler at ${other.address} ${what} ${ours}: ${advice}`),
      );
      expect(other.received[0].msg).toMatchObject({ op: "register-worker", ...wireVersion() });
      // It hung up: a scheduler that registered it sees it leave.
      await other.waitFor((m) => m.op === "disconnected");
      await other.close();
    }
  });

  it("fails to start when nobody listens at the scheduler address within connectTimeoutMs", async () => {
    await expect(testWorker("inproc://nobody/1", { connectTimeoutMs: 200 })).rejects.toThrow(
      /no in-process listener.*: still refused after 200 ms/,
    );
  });

  it("gives up on a scheduler that accepts the connection but never answers, at connectTimeoutMs", async () => {
    // A peer that neither answers nor closes its side (frozen, or not weft): an orderly
    // close waits for that side (up to 5 s), which held the worker past the timeout it reported.
    const held: Socket[] = [];
    const silent = createServer({ allowHalfOpen: true }, (socket) => {
      held.push(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const address = `tcp://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      const started = performance.now();
      await expect(testWorker(address, { connectTimeoutMs: 300 })).rejects.toThrow(
        `the scheduler at ${address} did not answer register-worker within 300 ms`,
      );
      expect(performance.now() - started).toBeLessThan(2_500);
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
    }
  });

  it("waits, saying so, for a scheduler that answers register-worker late (frozen meanwhile) when its start has no bound", async () => {
    const sched = await FakeScheduler.start({
      address: "inproc://late-answer",
      answerAfterMs: 700,
    });
    const { logger, records } = memoryLogger();
    try {
      // Before, the start failed at connectTimeoutMs ("did not answer register-worker within
      // 200 ms"): `weft worker` (deathTimeoutMs null) ended, exit 2, during a scheduler's pause.
      const w = await testWorker(sched.address, {
        connectTimeoutMs: 200,
        deathTimeoutMs: null,
        logger,
      });
      expect(w.status).toBe("running");
      const waits = records.filter((r) =>
        String(r.msg).startsWith("still waiting for the scheduler"),
      );
      expect(waits.length).toBeGreaterThan(0);
      expect(waits[0].msg).toContain(
        `still waiting for the scheduler at ${sched.address} to answer register-worker (for 0 s): it accepted the connection but says nothing (frozen or stalled, or not a weft scheduler)`,
      );
      await w.close();
    } finally {
      await sched.close();
    }
  });

  it("gives up on a late answer to register-worker at deathTimeoutMs when given", async () => {
    const sched = await FakeScheduler.start({
      address: "inproc://later-answer",
      answerAfterMs: 5_000,
    });
    try {
      await expect(
        testWorker(sched.address, { connectTimeoutMs: 200, deathTimeoutMs: 400 }),
      ).rejects.toThrow(/deathTimeoutMs|did not answer register-worker/);
    } finally {
      await sched.close();
    }
  });

  it("waits for the answer to register-worker only for what is left of deathTimeoutMs, when given", async () => {
    const address = "inproc://late-listener-silent/1";
    const starting = testWorker(address, { connectTimeoutMs: 200, deathTimeoutMs: 2_500 });
    const failed = starting.then(
      () => null,
      (err: Error) => err.message,
    );
    // Refused for 0.8 s, then accepted by a scheduler that does not answer (frozen).
    await new Promise((r) => setTimeout(r, 800));
    const sched = await FakeScheduler.start({ address, answerAfterMs: 10_000 });
    try {
      const message = await failed;
      const waited = /did not answer register-worker within (\d+) ms/.exec(message ?? "");
      expect(waited, String(message)).not.toBeNull();
      // Before, a whole deathTimeoutMs from the send: the start took 3.3 s or more.
      expect(Number(waited?.[1])).toBeLessThan(2_500);
      expect(message).toContain("(what was left of deathTimeoutMs, 2500 ms, from the start)");
    } finally {
      await sched.close();
    }
  });

  it("says it was closed when close() interrupts the wait for the scheduler", async () => {
    const w = new Worker({
      scheduler: "inproc://never/3",
      listen: "inproc://",
      executor: "inline",
      nthreads: 1,
      connectTimeoutMs: 5_000,
      logger: memoryLogger().logger,
    });
    const starting = w.start();
    await new Promise((r) => setTimeout(r, 100));
    await w.close();
    await expect(starting).rejects.toThrow(/^the worker was closed while starting$/);
    expect(w.status).toBe("failed");
  });

  it("waits for a scheduler that starts listening after it", async () => {
    const { logger, records } = memoryLogger();
    const starting = testWorker("inproc://late/7", { connectTimeoutMs: 5_000, logger });
    await new Promise((r) => setTimeout(r, 150));
    const late = await FakeScheduler.start({ address: "inproc://late/7" });
    const w = await starting;
    workers.push(w);
    expect(w.status).toBe("running");
    expect(records.some((r) => /refuses connections/.test(String(r.msg)))).toBe(true);
    await w.close();
    await late.close();
  });

  it("fails to start when a task module cannot be loaded", async () => {
    const missing = new URL("./noSuchModule.ts", import.meta.url).href;
    await expect(
      testWorker(sched.address, { executor: "piscina", taskModules: [missing] }),
    ).rejects.toThrow(/^Worker option taskModules: no such file: .*noSuchModule\.ts$/);
    const dir = mkdtempSync(join(tmpdir(), "weft-bad-module-"));
    const broken = join(dir, "broken.mjs");
    writeFileSync(broken, 'throw new Error("broken at import");\n');
    try {
      await expect(
        testWorker(sched.address, { executor: "piscina", taskModules: [broken] }),
      ).rejects.toThrow(/worker thread pool failed to start: broken at import/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("warns when its task modules define no task functions", async () => {
    // A module without defineTask (on fresh pool threads: the inline registry is the process's).
    const empty = new URL("../util/keySplit.ts", import.meta.url).href;
    const { logger, records } = memoryLogger();
    const w = await start({ executor: "piscina", taskModules: [empty], logger });
    expect(w.status).toBe("running");
    expect(records.find((r) => r.level === 40)?.msg).toMatch(/define no task functions/);
    const { logger: quietLogger, records: quiet } = memoryLogger();
    await start({ executor: "piscina", logger: quietLogger });
    expect(quiet.filter((r) => r.level === 40)).toEqual([]);
  });

  it("handles a batch of 150,000 scheduler messages (not spread as arguments)", async () => {
    const w = await start();
    const msgs = Array.from({ length: 150_000 }, (_, i) => ({
      op: "free-keys",
      keys: [`nothing-${i}`],
      stimulusId: `free-${i}`,
    }));
    await sched.sendBatch(w.address, msgs);
    await sched.computeTask(w.address, "after", { fn: "inc", args: [1] });
    await sched.waitForKey("task-finished", "after");
    expect(w.status).toBe("running");
  });

  it("rejects bad options", () => {
    expect(() => new Worker({ scheduler: sched.address, nthreads: 0 })).toThrow(
      /nthreads must be a positive integer, got 0/,
    );
    expect(() => new Worker({ scheduler: sched.address, connectTimeoutMs: 1e10 })).toThrow(
      /connectTimeoutMs must be at most 2147483647 ms/,
    );
    // A Node.js timer longer than 2^31 - 1 ms fires after 1 ms: a heartbeat, a look for
    // missing data or a busy peer asked again every millisecond, not every 25 days.
    for (const name of [
      "heartbeatIntervalMs",
      "findMissingIntervalMs",
      "retryBusyWorkerDelayMs",
      "batchedSendIntervalMs",
    ] as const) {
      expect(() => new Worker({ scheduler: sched.address, [name]: 2 ** 31 }), name).toThrow(
        `Worker option ${name} must be at most 2147483647 ms (about 24.8 days), got 2147483648`,
      );
      expect(() => new Worker({ scheduler: sched.address, [name]: Infinity }), name).toThrow(
        `Worker option ${name} must be`,
      );
      expect(
        resolveWorkerOptions({ scheduler: "tcp://127.0.0.1:1", [name]: 2 ** 31 - 1 })[name],
      ).toBe(2 ** 31 - 1);
    }
    // The log records kept for getWorkerLogs: the last 10,000 by default (as the scheduler's).
    expect(resolveWorkerOptions({ scheduler: "tcp://127.0.0.1:1" }).logLength).toBe(10_000);
    expect(resolveWorkerOptions({ scheduler: "tcp://127.0.0.1:1", logLength: 0 }).logLength).toBe(
      0,
    );
    expect(() =>
      resolveWorkerOptions({ scheduler: "tcp://127.0.0.1:1", logger: {} as never }),
    ).toThrow(new TypeError("Worker option logger must be a pino logger, got {}"));
    expect(() => new Worker({ scheduler: "" })).toThrow(/scheduler .* is required/);
    expect(
      () => new Worker({ scheduler: "tcp://127.0.0.1:1", executor: "gpu" as "inline" }),
    ).toThrow(/executor must be/);
    expect(
      () =>
        new Worker({ scheduler: "tcp://127.0.0.1:1", taskModules: ["https://example.com/t.js"] }),
    ).toThrow(/only file URLs and paths/);
    expect(
      () => new Worker({ scheduler: "tcp://127.0.0.1:1", maxFrameBytes: 3 * 2 ** 30 }),
    ).toThrow(
      /^Worker option maxFrameBytes must be an integer from 1 to 2147483647, got 3221225472$/,
    );
    expect(
      () => new Worker({ scheduler: "tcp://127.0.0.1:1", maxMessageBytes: 5 * 2 ** 30 }),
    ).toThrow(/^Worker option maxMessageBytes must be an integer from 1 to/);
    // The scheduler would refuse the registration; the worker says so at once.
    expect(
      () =>
        new Worker({
          scheduler: "tcp://127.0.0.1:1",
          resources: { GPU: Number.POSITIVE_INFINITY },
        }),
    ).toThrow("Worker option resources.GPU must be finite, got Infinity");
    // A count of pool threads: 2.5 or Infinity went to piscina's maxThreads as given.
    for (const bad of [2.5, Infinity, -1]) {
      expect(() => new Worker({ scheduler: "tcp://127.0.0.1:1", maxSecededThreads: bad })).toThrow(
        `Worker option maxSecededThreads must be an integer >= 0, got ${bad}`,
      );
    }
    expect(() => new Worker({ scheduler: "tcp://127.0.0.1:1", lifetimeMs: 0 })).toThrow(
      "Worker option lifetimeMs must be a positive integer, got 0",
    );
    expect(
      () =>
        new Worker({ scheduler: "tcp://127.0.0.1:1", lifetimeMs: 1000, lifetimeStaggerMs: 2000 }),
    ).toThrow("Worker option lifetimeStaggerMs (2000) must be at most lifetimeMs (1000)");
    expect(() => new Worker({ scheduler: "tcp://127.0.0.1:1", lifetimeStaggerMs: 5 })).toThrow(
      "Worker option lifetimeStaggerMs (5) must be at most lifetimeMs (none)",
    );
    expect(
      () =>
        new Worker({
          scheduler: "tcp://127.0.0.1:1",
          lifetimeMs: 10,
          lifetimeRestart: 1 as unknown as boolean,
        }),
    ).toThrow("Worker option lifetimeRestart must be true or false, got 1");
    expect(
      () => new Worker({ scheduler: "tcp://127.0.0.1:1", validate: "false" as unknown as boolean }),
    ).toThrow('Worker option validate must be true or false, got "false"');
  });

  it("names the option of a malformed list, resources or address at construction", () => {
    const at = "tcp://127.0.0.1:1";
    const bad = (o: Partial<ConstructorParameters<typeof Worker>[0]>) => () =>
      new Worker({ scheduler: at, ...o });
    // A lone path failed as "(o.taskModules ?? []).map is not a function".
    expect(bad({ taskModules: "./tasks.ts" as never })).toThrow(
      'Worker option taskModules must be an array of file URLs or paths, got "./tasks.ts"',
    );
    expect(bad({ preload: "./setup.mjs" as never })).toThrow(
      'Worker option preload must be an array of file URLs or paths, got "./setup.mjs"',
    );
    // A string or an array failed in the state machine, naming no Worker option.
    for (const resources of ["GPU=2", [1], 5, new Map([["GPU", 1]])]) {
      expect(bad({ resources: resources as never }), String(resources)).toThrow(
        /^Worker option resources must be \{name: amount\}, e.g. \{GPU: 2\}, got /,
      );
    }
    expect(resolveWorkerOptions({ scheduler: at, resources: null as never }).resources).toEqual({});
    // Malformed addresses failed only in start(), their errors naming no option.
    expect(bad({ listen: "foo://x" })).toThrow(
      'Worker option listen must be an address such as tcp://10.0.0.1:8786, got "foo://x": unknown scheme "foo" (inproc, tcp, tls)',
    );
    expect(bad({ listen: 5 as never })).toThrow(/^Worker option listen must be an address/);
    expect(bad({ listen: "tcp://127.0.0.1:99999" })).toThrow(
      /^Worker option listen must be an address .*: port 99999 out of range/,
    );
    expect(() => new Worker({ scheduler: "localhost" })).toThrow(
      'Worker option scheduler must be an address such as tcp://10.0.0.1:8786, got "localhost": missing port number in address "localhost"',
    );
    expect(() => new Worker({ scheduler: "foo://x:1" })).toThrow(
      /^Worker option scheduler must be an address .*: unknown address scheme "foo"/,
    );
    // What they accept: a listener's port may be left out (any), as listen takes it.
    expect(resolveWorkerOptions({ scheduler: at, listen: "tcp://127.0.0.1" }).listen).toBe(
      "tcp://127.0.0.1",
    );
    expect(resolveWorkerOptions({ scheduler: "inproc://s/1", listen: "inproc://" }).listen).toBe(
      "inproc://",
    );
    expect(resolveWorkerOptions({ scheduler: "[::1]:8786" }).scheduler).toBe("[::1]:8786");
  });

  it("takes task modules as URL objects, and the executor named as LocalCluster names it", () => {
    const tasks = new URL("./testTasks.ts", import.meta.url);
    const o = resolveWorkerOptions({
      scheduler: "tcp://127.0.0.1:1",
      executor: "threads",
      taskModules: [tasks],
    });
    expect(o.taskModules).toEqual([tasks.href]);
    expect(o.executor).toBe("piscina");
    expect(resolveWorkerOptions({ scheduler: "tcp://127.0.0.1:1" }).executor).toBe("piscina");
  });

  it("gives the state machine a transferMessageBytesLimit of at most its maxMessageBytes", () => {
    const limit = (o: Partial<ConstructorParameters<typeof Worker>[0]>) =>
      new Worker({ scheduler: "tcp://127.0.0.1:1", ...o }).state.transferMessageBytesLimit;
    expect(limit({})).toBe(50e6);
    // A fetch sized for 50 MB would ask for an answer this worker refuses to read.
    expect(limit({ maxMessageBytes: 1_000_000 })).toBe(1_000_000);
    expect(limit({ maxMessageBytes: 1_000_000, transferMessageBytesLimit: 2_000 })).toBe(2_000);
  });

  it("says which variable names an unknown log level, when it makes its own logger", () => {
    vi.stubEnv("WEFT_LOG_LEVEL", "verbose");
    try {
      expect(() => new Worker({ scheduler: "tcp://127.0.0.1:1" })).toThrow(
        /^\$WEFT_LOG_LEVEL must be one of fatal, .*, got "verbose"$/,
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("refuses options that are not an object, naming what it got", () => {
    expect(() => resolveWorkerOptions(null as never)).toThrow(
      new TypeError("Worker options must be an object, got null"),
    );
    expect(() => resolveWorkerOptions("tcp://127.0.0.1:1" as never)).toThrow(
      new TypeError('Worker options must be an object, got "tcp://127.0.0.1:1"'),
    );
  });

  it("refuses an option it does not know, naming the one meant", () => {
    const given = { scheduler: "tcp://127.0.0.1:1", memoryLimt: "4GB" };
    expect(() => resolveWorkerOptions(given as never)).toThrow(
      'Worker options: unknown option "memoryLimt" (did you mean memoryLimit?)',
    );
  });

  it("refuses a contact address peers cannot connect to, and writes out a bare one's scheme", () => {
    const contact = (a: string) =>
      resolveWorkerOptions({ scheduler: "tcp://127.0.0.1:1", contactAddress: a });
    for (const bad of ["garbage", "foo://10.0.0.1:4000", "tcp://10.0.0.1", "tcp://:4000", ""]) {
      expect(() => contact(bad), bad).toThrow(/contactAddress must be an address peers can/);
    }
    expect(contact("tcp://10.0.0.1:4000").contactAddress).toBe("tcp://10.0.0.1:4000");
    expect(contact("[::1]:4000").contactAddress).toBe("tcp://[::1]:4000");
    const inproc = {
      scheduler: "inproc://s/1",
      listen: "inproc://",
      contactAddress: "inproc://local/3",
    };
    expect(resolveWorkerOptions(inproc).contactAddress).toBe("inproc://local/3");
    // An inproc:// address for a TCP listener names no listener of this worker.
    expect(() => contact("inproc://local/3")).toThrow(
      /got "inproc:\/\/local\/3": this worker listens on tcp:\/\/ \(listen tcp:\/\/127.0.0.1:0\), which peers dialling inproc:\/\/ would not reach/,
    );
    // Another scheme than the listener's registered, and every fetch from it failed.
    expect(() => contact("tls://10.0.0.1:4000")).toThrow(
      'Worker option contactAddress must be an address peers can connect to, such as tcp://10.0.0.1:4000, got "tls://10.0.0.1:4000": this worker listens on tcp:// (listen tcp://127.0.0.1:0), which peers dialling tls:// would not reach',
    );
  });

  it("closes itself when the scheduler goes away", async () => {
    const w = await start();
    await sched.close();
    while (w.status !== "closed") await new Promise((r) => setTimeout(r, 5));
    expect(w.fault).toBe("lost the connection to the scheduler");
  });

  it("says why it lost the scheduler when a message was too large for it (limits set apart)", async () => {
    const tcp = await FakeScheduler.start({ address: "tcp://127.0.0.1:0" });
    try {
      const w = await testWorker(tcp.address, {
        listen: "tcp://127.0.0.1:0",
        maxMessageBytes: 1_000,
      });
      await tcp.computeTask(w.address, "t", { fn: "inc", args: ["x".repeat(5_000)] });
      while (w.status !== "closed") await new Promise((r) => setTimeout(r, 5));
      expect(w.fault).toMatch(
        /^lost the connection to the scheduler: received a message of at least \d+\.\d\d [kM]iB \(\d+ bytes\): larger than maxMessageBytes \(0\.98 kiB\) \(give every process of the cluster the same --max-message-bytes and --max-frame-bytes\)$/,
      );
    } finally {
      await tcp.close();
    }
  });
});

describe("a worker whose state machine fails", () => {
  it("closes with status failed, already when `closed` resolves", async () => {
    const { logger, records } = memoryLogger();
    const w = await start({ logger, validate: false });
    const seen = w.closed.then(() => w.status);
    // A result for a task it never had: the state machine throws, as a bug would make it.
    w.handleStimulus(ExecuteSuccessEvent.dummy("never-given", { stimulusId: "test-fault" }));
    expect(await seen).toBe("failed");
    expect(w.fault).toMatch(/^its state machine failed: /);
    expect(records.some((r) => r.msg === "worker state machine failed; closing")).toBe(true);
  });
});
