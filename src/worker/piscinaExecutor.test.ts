import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { BroadcastChannel, type Worker as Thread } from "node:worker_threads";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { threadTimes } from "../client/profile.ts";
import { connect } from "../comm/connect.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import type { ExecuteOutcome, RunControl } from "./executor.ts";
import { MOVE_MIN_BYTES, ownBuffer } from "./ownBuffer.ts";
import { PiscinaExecutor } from "./piscinaExecutor.ts";
import { CpuProfiler } from "./profiler.ts";
import { TEST_TASKS } from "./testWorker.ts";

const run = promisify(execFile);
const noClient = () => Promise.reject(new Error("no client in this test"));
const noControl: RunControl = { secede: () => {}, rejoin: async () => {}, client: noClient };

describe("PiscinaExecutor", () => {
  let executor: PiscinaExecutor;
  beforeAll(async () => {
    executor = await PiscinaExecutor.start({ nthreads: 2, taskModules: [TEST_TASKS] });
  });
  afterAll(async () => {
    await executor.close();
  });

  const go = (
    fn: string,
    args: unknown[],
    signal = new AbortController().signal,
  ): Promise<ExecuteOutcome> => executor.run({ key: `k-${fn}`, fn, args }, noControl, signal);

  it("runs a task function on a pool thread", async () => {
    const o = await go("inc", [1]);
    expect(o).toMatchObject({ status: "ok", value: 2, secededAfter: null });
    expect(o.threadId).toBeGreaterThan(0);
    expect(o.stop).toBeGreaterThanOrEqual(o.start);
  });

  it("a task's traceback ends with the task's own frames: weft's and piscina's below are cut", async () => {
    for (const fn of ["boom", "boomAfterAwait"]) {
      const o = await go(fn, ["no"]);
      const { tracebackText, stack } = (o as { error: { tracebackText: string; stack: string } })
        .error;
      expect(tracebackText).toMatch(/testTasks\.ts:\d+/);
      for (const text of [tracebackText, stack]) {
        expect(text).not.toMatch(/runTask|taskContext|threadMain|piscina|node:internal/);
      }
    }
    const o = await go("frameless", []);
    expect((o as { error: { tracebackText: string } }).error.tracebackText).toBe("");
  });

  it("values cross threads by structured clone (Maps, typed arrays, dates)", async () => {
    const v = { m: new Map([[1, new Set(["x"])]]), t: new Float32Array([1.5]), d: new Date(5) };
    const o = await go("identity", [v]);
    expect(o.status).toBe("ok");
    expect((o as { value: unknown }).value).toEqual(v);
  });

  it("a small array in a result beside a large one does not keep the whole result's bytes allocated", async () => {
    const v = { small: Uint8Array.from([1, 2, 3]), big: new Uint8Array(1_600_000).fill(4) };
    const o = await go("identity", [v]);
    expect(o.status).toBe("ok");
    const got = (o as { value: typeof v }).value;
    expect(got.small).toEqual(v.small);
    expect(Buffer.from(got.big).equals(Buffer.from(v.big))).toBe(true);
    expect(got.small.buffer.byteLength).toBe(3);
  });

  it("a small array in an argument beside a large one does not keep the whole arguments' bytes allocated on the thread", async () => {
    // A task keeping the small one (a module-level cache) would keep all of them.
    const o = await go("bufferLengths", [
      { small: Uint8Array.from([1, 2, 3]), big: new Uint8Array(1_600_000).fill(4) },
    ]);
    expect(o.status).toBe("ok");
    const lengths = (o as { value: { small: number; big: number } }).value;
    expect(lengths.small).toBe(3);
    // The large one is read in place, not copied: its buffer holds the arguments' framing too.
    expect(lengths.big).toBeGreaterThan(1_600_000);
  });

  it("moves the serialized arguments to the thread rather than copying them; large values cross whole", async () => {
    const pool = (executor as unknown as { pool: { run: (...a: unknown[]) => unknown } }).pool;
    const spy = vi.spyOn(pool, "run");
    try {
      const big = Float64Array.from({ length: 1 << 17 }, (_, i) => i / 7);
      const o = await go("identity", [{ big, view: big.subarray(5, 9) }]);
      expect(o.status).toBe("ok");
      expect((o as { value: unknown }).value).toEqual({ big, view: big.subarray(5, 9) });
      const [msg, options] = spy.mock.calls[0] as [
        { args: Uint8Array },
        { transferList: ArrayBuffer[] },
      ];
      // Moved: the main thread's copy of the bytes is gone (detached).
      expect(options.transferList).toHaveLength(1);
      expect(options.transferList[0].byteLength).toBe(0);
      expect(msg.args.byteLength).toBe(0);
    } finally {
      spy.mockRestore();
    }
  });

  it("ownBuffer: only a large view spanning its whole ArrayBuffer is moved", () => {
    const whole = new Uint8Array(MOVE_MIN_BYTES);
    expect(ownBuffer(whole)).toEqual([whole.buffer]);
    expect(ownBuffer(whole.subarray(1))).toEqual([]);
    expect(ownBuffer(whole.subarray(0, MOVE_MIN_BYTES - 1))).toEqual([]);
    expect(ownBuffer(new Uint8Array(MOVE_MIN_BYTES - 1))).toEqual([]); // copied: cheaper
    expect(ownBuffer(Buffer.from("pooled"))).toEqual([]); // a slice of Buffer's pool
  });

  it("an aborted run rejects (the thread is replaced)", async () => {
    const ac = new AbortController();
    const p = go("sleep", [60_000, 1], ac.signal);
    setTimeout(() => ac.abort(new Error("closing")), 50);
    await expect(p).rejects.toThrow();
    expect((await go("inc", [2])).status).toBe("ok");
  });

  it("reports secede and waits for rejoin through the channel", async () => {
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const control: RunControl = {
      client: noClient,
      secede: (d) => events.push(`secede ${d >= 0}`),
      rejoin: async () => {
        events.push("rejoin asked");
        await gate;
        events.push("rejoin granted");
      },
    };
    const name = `weft-exec-test-${Math.random()}`;
    const p = executor.run(
      { key: "w", fn: "secedeAndWait", args: [name] },
      control,
      new AbortController().signal,
    );
    await new Promise((r) => setTimeout(r, 200));
    const { BroadcastChannel } = await import("node:worker_threads");
    const ch = new BroadcastChannel(name);
    ch.postMessage("hello");
    ch.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(events).toEqual(["secede true", "rejoin asked"]);
    release();
    const o = await p;
    expect(o.status).toBe("ok");
    expect(o.secededAfter).not.toBeNull();
    expect(events).toEqual(["secede true", "rejoin asked", "rejoin granted"]);
  });

  it("a module that does not compile is refused with the compiler's message, not [object Object]", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-load-modules-"));
    const path = join(dir, "broken.ts");
    writeFileSync(path, "this is not typescript\n");
    try {
      const err = await executor.loadModules([pathToFileURL(path).href]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(String((err as Error).message)).toMatch(/broken\.ts/);
      expect(String((err as Error).message)).not.toMatch(/\[object Object\]/);
      // The pool is still usable, and the broken module was not kept.
      expect(await go("inc", [1])).toMatchObject({ status: "ok", value: 2 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails to start with a clear error when a task module is missing", async () => {
    const missing = new URL("./noSuchTasks.ts", import.meta.url).href;
    await expect(PiscinaExecutor.start({ nthreads: 1, taskModules: [missing] })).rejects.toThrow(
      /worker thread pool failed to start: .*noSuchTasks/,
    );
  });
});

describe("PiscinaExecutor, what a task leaves running on its thread once it returns", () => {
  // An idle thread's event loop turns, as a Python thread's work goes on in Dask: with
  // piscina's default (atomics "sync") it was stopped in Atomics.wait until the thread's
  // next task, and what a synchronous task had left waited that long, or was lost.
  let executor: PiscinaExecutor;
  let dir: string;
  const threadErrors: { message: string; lastTask: string | null }[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "weft-left-running-"));
    // One thread, left idle after each task: nothing else turns its loop.
    executor = await PiscinaExecutor.start({
      nthreads: 1,
      taskModules: [TEST_TASKS],
      onThreadError: (err, lastTask) => threadErrors.push({ message: err.message, lastTask }),
    });
  });
  afterAll(async () => {
    await executor.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const go = (fn: string, args: unknown[]) =>
    executor.run({ key: `k-${fn}`, fn, args }, noControl, new AbortController().signal);
  const contents = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : null);

  it("a timer a task left fires on the idle thread", async () => {
    const file = join(dir, "timer");
    expect(await go("appendLater", [file, "fired", 10])).toMatchObject({ value: "returned" });
    await vi.waitFor(() => expect(contents(file)).toBe("fired"), { timeout: 5_000 });
  });

  it("a write through a stream a task did not wait for reaches its file", async () => {
    const file = join(dir, "stream");
    expect(await go("appendThroughStream", [file, "written"])).toMatchObject({ value: "returned" });
    await vi.waitFor(() => expect(contents(file)).toBe("written"), { timeout: 5_000 });
  });

  it("its idle thread still profiles as idle, its loop waiting rather than piscina's Atomics.wait", async () => {
    await go("inc", [1]);
    const profiler = new CpuProfiler(() => executor.threadIds());
    await profiler.start("idle", { intervalUs: 1000, maxMs: 60_000 });
    await new Promise((r) => setTimeout(r, 300));
    const got = await profiler.stop("idle");
    const [pool] = got.threads.filter((t) => t.thread !== "main");
    const { sampledMs, idleMs } = threadTimes(pool.profile);
    expect(sampledMs).toBeGreaterThan(100);
    // All but a few samples (a timer's turn of the loop) are idle.
    expect(idleMs).toBeGreaterThan(sampledMs * 0.8);
  });

  it("a leftover timer that throws ends the idle thread, not the next task on it", async () => {
    expect(await go("throwLater", [10])).toMatchObject({ value: "returned" });
    await vi.waitFor(
      () =>
        expect(threadErrors).toEqual([
          { message: "uncaught in a timer", lastTask: "task k-throwLater" },
        ]),
      {
        timeout: 5_000,
      },
    );
    expect(await go("inc", [1])).toMatchObject({ status: "ok", value: 2 });
  });
});

describe("PiscinaExecutor.close after runs it aborted", () => {
  it("leaves no thread running: the aborted runs' threads are not replaced once it is done", async () => {
    const executor = await PiscinaExecutor.start({ nthreads: 2, taskModules: [TEST_TASKS] });
    const pool = (executor as unknown as { pool: { threads: Thread[] } }).pool;
    const name = `weft-close-test-${randomUUID()}`;
    const channel = new BroadcastChannel(name);
    let started = 0;
    const bothStarted = new Promise<void>((resolve) => {
      channel.onmessage = () => {
        if (++started === 2) resolve();
      };
    });
    const aborts = [new AbortController(), new AbortController()];
    const runs = aborts.map((ac, i) =>
      executor.run(
        { key: `busy-${i}`, fn: "signal", args: [name, i, 60_000] },
        noControl,
        ac.signal,
      ),
    );
    // Handled from the start: they reject as they are aborted, long before close() ends.
    const settled = Promise.allSettled(runs);
    try {
      await bothStarted;
      const busy = [...pool.threads];
      const exited = busy.map((t) => once(t, "exit"));
      // As a closing worker does: its running tasks aborted, then its executor closed.
      for (const ac of aborts) ac.abort(new Error("closing"));
      await executor.close();
      expect((await settled).map((r) => r.status)).toEqual(["rejected", "rejected"]);
      await Promise.all(exited);
      // Piscina started a thread for each aborted one whose exit came after close():
      // each imported the task modules, keeping a closed worker's process alive.
      expect(pool.threads).toHaveLength(0);
    } finally {
      channel.close();
      await executor.close();
    }
  });
});

describe("PiscinaExecutor.collectGarbage", () => {
  it("has every pool thread collect its own heap", async () => {
    const executor = await PiscinaExecutor.start({
      nthreads: 1,
      maxSecededThreads: 0,
      taskModules: [TEST_TASKS],
    });
    try {
      const go = async (fn: string): Promise<unknown> => {
        const o = await executor.run(
          { key: fn, fn, args: [] },
          noControl,
          new AbortController().signal,
        );
        if (o.status !== "ok") throw new Error(`${fn} did not return`);
        return o.value;
      };
      expect(await go("makeGarbage")).toBe(1_000_000);
      const before = (await go("heapUsed")) as number;
      // Left idle, the thread does not shed the garbage by itself: V8 may collect a
      // little meanwhile (1.7 MB once, on a loaded host), not the 20 MB checked below.
      await new Promise((r) => setTimeout(r, 50));
      expect(await go("heapUsed")).toBeGreaterThan(before - 20_000_000);
      executor.collectGarbage();
      // Some 30 MB of objects gone.
      await vi.waitFor(async () => expect(await go("heapUsed")).toBeLessThan(before - 20_000_000), {
        timeout: 5_000,
      });
    } finally {
      await executor.close();
    }
  });
});

describe("PiscinaExecutor, a new thread that cannot load the task modules", () => {
  it("fails the runs waiting for a thread instead of leaving them queued forever", async () => {
    const flag = join(tmpdir(), `weft-import-fails-${randomUUID()}`);
    const url = new URL("./testTasksImportFails.ts", import.meta.url);
    url.searchParams.set("flag", flag);
    const executor = await PiscinaExecutor.start({ nthreads: 1, taskModules: [url.href] });
    const go = (key: string, fn: string, args: unknown[]) =>
      executor.run({ key, fn, args }, noControl, new AbortController().signal);
    try {
      writeFileSync(flag, "");
      // The task ends its thread; the thread replacing it cannot import the module.
      await expect(go("a", "exitThread", [])).rejects.toThrow(/PoolThreadDied|stopped/);
      const err = (await go("b", "inc", [1]).catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(Error);
      expect(err.name).toBe("PoolThreadStartFailed");
      expect(err.message).toMatch(
        /^no pool thread could start to run task b: Error: testTasksImportFails: refusing to load/,
      );
      // Once the module loads again, a new thread runs the next task.
      rmSync(flag);
      expect(await go("c", "inc", [2])).toMatchObject({ status: "ok", value: 3 });
    } finally {
      rmSync(flag, { force: true });
      await executor.close();
    }
  }, 20_000);
});

describe("PiscinaExecutor onThreadError", () => {
  it("one that throws is a process warning: the runs waiting for a thread still fail", async () => {
    const warned: string[] = [];
    const spy = vi.spyOn(process, "emitWarning").mockImplementation((w) => {
      warned.push(String(w));
    });
    const flag = join(tmpdir(), `weft-import-fails-${randomUUID()}`);
    const url = new URL("./testTasksImportFails.ts", import.meta.url);
    url.searchParams.set("flag", flag);
    const executor = await PiscinaExecutor.start({
      nthreads: 1,
      taskModules: [url.href],
      onThreadError: () => {
        throw new RangeError("cannot log it");
      },
    });
    const go = (key: string, fn: string, args: unknown[]) =>
      executor.run({ key, fn, args }, noControl, new AbortController().signal);
    try {
      writeFileSync(flag, "");
      await expect(go("a", "exitThread", [])).rejects.toThrow(/PoolThreadDied|stopped/);
      // Before, the throw (from the pool's error event) was an uncaught exception, and
      // the runs waiting for a thread were not failed.
      const err = (await go("b", "inc", [1]).catch((e: unknown) => e)) as Error;
      expect(err.name).toBe("PoolThreadStartFailed");
      expect(warned).toContain("PiscinaExecutor onThreadError failed: RangeError: cannot log it");
    } finally {
      rmSync(flag, { force: true });
      spy.mockRestore();
      await executor.close();
    }
  }, 20_000);
});

describe("pool threads load TypeScript however the main thread started", () => {
  const script = fileURLToPath(new URL("./testPoolScript.ts", import.meta.url));
  const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));

  it("tsx script.ts", async () => {
    const { stdout } = await run(tsx, [script], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
    });
    expect(JSON.parse(stdout.trim())).toMatchObject({ status: "ok", value: 42 });
  });

  // node --import tsx script.ts: the process of the next test, a process of its own
  // costing some 3 s of CPU.
});

describe("what a task wrote to stdout", () => {
  it("reaches the process's stdout before its outcome, even when the executor closes at once (node --import tsx script.ts)", async () => {
    // A pool thread's stdout passes on one chunk at a time: the rest waited on the
    // thread, and was lost with it when the executor closed as the result came.
    // Its outcome, OK, is also that the thread loaded TypeScript in a process whose
    // main thread started with node --import tsx.
    const script = fileURLToPath(new URL("./testPoolScript.ts", import.meta.url));
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", script, "logLines", "[2000]"],
      {
        cwd: fileURLToPath(new URL("../..", import.meta.url)),
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const lines = stdout.trim().split("\n");
    expect(JSON.parse(lines.pop() ?? "")).toMatchObject({ status: "ok", value: 2000 });
    expect(lines).toEqual(Array.from({ length: 2000 }, (_, i) => `line ${i}`));
  }, 30_000);
});

describe("PiscinaExecutor.loadModules", () => {
  it("loads modules given at once, one call after the other, on every thread", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-load-modules-"));
    const registry = new URL("./taskRegistry.ts", import.meta.url).href;
    const urls = ["a", "b", "c"].map((n) => {
      const path = join(dir, `${n}.mjs`);
      writeFileSync(
        path,
        `import { defineTask } from ${JSON.stringify(registry)};\ndefineTask("loaded.${n}", () => "${n}");\n`,
      );
      return pathToFileURL(path).href;
    });
    // No spare threads: the runs below queue for these three, each of which took the
    // modules. (Spare ones, started for the runs at a second of CPU each, imported
    // them before their first run: that path is the ImportError test's below.)
    const executor = await PiscinaExecutor.start({
      nthreads: 3,
      maxSecededThreads: 0,
      taskModules: [TEST_TASKS],
    });
    try {
      // Concurrent calls: none may drop another's module.
      const names = await Promise.all(urls.map((u) => executor.loadModules([u])));
      expect(names[2]).toEqual(expect.arrayContaining(["loaded.a", "loaded.b", "loaded.c"]));
      const runs = Array.from({ length: 9 }, (_, i) =>
        executor.run(
          { key: `k${i}`, fn: `loaded.${"abc"[i % 3]}`, args: [] },
          noControl,
          new AbortController().signal,
        ),
      );
      const outcomes = await Promise.all(runs);
      for (const [i, o] of outcomes.entries()) {
        expect(o).toMatchObject({ status: "ok", value: "abc"[i % 3] });
      }
      expect(new Set(outcomes.map((o) => o.threadId)).size).toBe(3);
    } finally {
      await executor.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a task on a thread that cannot import a loaded module fails with ImportError", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-load-modules-"));
    const registry = new URL("./taskRegistry.ts", import.meta.url).href;
    const path = join(dir, "gone.mjs");
    writeFileSync(
      path,
      `import { defineTask } from ${JSON.stringify(registry)};\ndefineTask("loaded.gone", async () => { await new Promise((r) => setTimeout(r, 200)); return 1; });\n`,
    );
    const executor = await PiscinaExecutor.start({
      nthreads: 2,
      maxSecededThreads: 0,
      taskModules: [TEST_TASKS],
    });
    try {
      // Both threads up (one may still be starting): two runs at once, on two threads.
      const warm = await Promise.all(
        [1, 2].map((i) =>
          executor.run(
            { key: `w${i}`, fn: "sleep", args: [100, i] },
            noControl,
            new AbortController().signal,
          ),
        ),
      );
      expect(new Set(warm.map((o) => o.threadId)).size).toBe(2);
      await executor.loadModules([pathToFileURL(path).href]);
      rmSync(path); // the thread that imported it has it; the other cannot import it now
      const signal = new AbortController().signal;
      const outcomes = await Promise.all(
        [1, 2].map((i) =>
          executor.run({ key: `g${i}`, fn: "loaded.gone", args: [] }, noControl, signal),
        ),
      );
      const statuses = outcomes.map((o) => o.status).sort();
      expect(statuses).toEqual(["error", "ok"]);
      const failed = outcomes.find((o) => o.status === "error") as {
        error: { exceptionText: string };
      };
      expect(failed.error.exceptionText).toMatch(
        /^ImportError: task g\d: its thread could not import the task module file:.*gone\.mjs: /,
      );
    } finally {
      await executor.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("PiscinaExecutor's start", () => {
  it("lets a closed executor be collected at once: the wait for its first thread does not hold it for startTimeoutMs", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    // Before, the start's timeout (60 s by default) went on after a thread answered and
    // held the executor, its pool and channel: every worker closed within a minute of
    // its start (a cluster scaling up and down) stayed in memory that long.
    const collected = await (async () => {
      const executor = await PiscinaExecutor.start({
        nthreads: 1,
        taskModules: [TEST_TASKS],
        startTimeoutMs: 600_000,
      });
      await executor.close();
      return new WeakRef(executor);
    })();
    for (let i = 0; i < 20 && collected.deref() !== undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      gc();
    }
    expect(collected.deref()).toBeUndefined();
  });
});

describe("PiscinaExecutor.peerLeft", () => {
  it("abandons a thread's connection still being made to the peer that left: the task's connect ends at once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-peer-left-"));
    const path = join(dir, "callsFrozen.mjs");
    const source = (name: string) => JSON.stringify(new URL(name, import.meta.url).href);
    writeFileSync(
      path,
      `import { defineTask } from ${source("./taskRegistry.ts")};\n` +
        `import { getClient } from ${source("../client/taskClient.ts")};\n` +
        `import { connect } from ${source("../comm/connect.ts")};\n` +
        // Its client first: a thread's connections go through the worker from then on.
        `defineTask("peerLeft.callsFrozen", async (address) => {\n` +
        `  await getClient();\n` +
        `  try { await connect(address, { timeoutMs: 60_000 }); return "connected"; }\n` +
        `  catch (err) { return err.message; }\n` +
        `});\n`,
    );
    const scheduler = await Scheduler.start({
      listen: "inproc://",
      logger: pino({ level: "silent" }),
    });
    // A peer that never lets a connection through (frozen, over TLS: its handshake
    // never ends), until the dial is abandoned.
    const frozen = "tcp://127.0.0.1:9";
    let dialling!: () => void;
    const dialled = new Promise<void>((resolve) => {
      dialling = resolve;
    });
    const executor = await PiscinaExecutor.start({
      nthreads: 1,
      taskModules: [TEST_TASKS, pathToFileURL(path).href],
      scheduler: scheduler.address,
      connectTimeoutMs: 60_000,
      dial: (address, signal) => {
        if (address !== frozen) return connect(address, { signal });
        dialling();
        return new Promise((_, reject) => {
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        });
      },
    });
    try {
      const run = executor.run(
        { key: "k", fn: "peerLeft.callsFrozen", args: [frozen] },
        noControl,
        new AbortController().signal,
      );
      await dialled;
      executor.peerLeft(frozen, `${frozen} was removed from the cluster`);
      expect(await run).toMatchObject({
        status: "ok",
        value: `cannot connect to ${frozen}: ${frozen} was removed from the cluster`,
      });
    } finally {
      await executor.close();
      await scheduler.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
