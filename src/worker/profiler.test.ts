import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { type CpuProfile, CpuProfiler } from "./profiler.ts";
import { threadInspector } from "./threadInspector.ts";

/**
 * A thread that spins in `spinInThread` for `ms` whenever told to, then says
 * so. With `mapsTo`, it answers the profiler's question of where its frames
 * come from (as a pool thread does, from its source maps) with `mapsTo`, at
 * line 41, column 2, for each of its own.
 */
function spinner(mapsTo?: string): Worker {
  const answer =
    mapsTo === undefined
      ? ""
      : `globalThis[Symbol.for("weft.originalPositions")] = (ps) =>
           ps.map((p) => (p.url === "[worker eval]" ? { url: ${JSON.stringify(mapsTo)}, line: 41, column: 2 } : null));`;
  return new Worker(
    `const { parentPort } = require("node:worker_threads");
     ${answer}
     function spinInThread(ms) { const t = Date.now(); let x = 0; while (Date.now() - t < ms) x += Math.sqrt(x + 1); return x; }
     parentPort.on("message", (ms) => parentPort.postMessage(spinInThread(ms)));`,
    { eval: true },
  );
}

function spin(w: Worker, ms: number): Promise<unknown> {
  return new Promise((resolve) => {
    w.once("message", resolve);
    w.postMessage(ms);
  });
}

function sampledUrls(p: CpuProfile): Set<string> {
  const hit = new Set<number>(p.samples ?? []);
  return new Set(p.nodes.filter((n) => hit.has(n.id)).map((n) => n.callFrame.url));
}

const threads: Worker[] = [];
afterEach(async () => {
  for (const t of threads.splice(0)) await t.terminate();
});

describe("CpuProfiler", () => {
  it("profiles the main thread and the threads it is given, not the others", async () => {
    const ours = spinner();
    const other = spinner();
    threads.push(ours, other);
    await Promise.all([spin(ours, 1), spin(other, 1)]);
    const profiler = new CpuProfiler(() => [ours.threadId]);
    await profiler.start("p1", { intervalUs: 1000, maxMs: 60_000 });
    expect(profiler.current).toBe("p1");
    await Promise.all([spin(ours, 300), spin(other, 300)]);
    const got = await profiler.stop("p1");
    expect(profiler.current).toBeNull();
    expect(got.pid).toBe(process.pid);
    expect(got.timedOut).toBe(false);
    expect(got.lostThreads).toBe(0);
    expect(got.threads.map((t) => t.thread)).toEqual(["main", `thread ${ours.threadId}`]);
    const pool = got.threads[1].profile;
    // Sampled in the thread's own code (V8 may inline spinInThread into its caller).
    expect(sampledUrls(pool).has("[worker eval]")).toBe(true);
    expect(sampledUrls(got.threads[0].profile).has("[worker eval]")).toBe(false);
    // About 300 samples on a quiet host; 43 were seen beside 8 busy loops on 2 cores.
    expect(pool.samples?.length ?? 0).toBeGreaterThan(10);
    // The clocks line up: the profile's start, moved to the wall clock, is about now.
    const startWallMs = (pool.startTime + got.clockOffsetUs) / 1000;
    expect(Math.abs(Date.now() - startWallMs)).toBeLessThan(5_000);
  });

  it("puts a pool thread's frames where the thread's source maps say, asked once the profile stops", async () => {
    const mapped = spinner("file:///tasks.ts");
    const plain = spinner();
    threads.push(mapped, plain);
    await Promise.all([spin(mapped, 1), spin(plain, 1)]);
    const profiler = new CpuProfiler(() => [mapped.threadId, plain.threadId]);
    await profiler.start("p-map", { intervalUs: 1000, maxMs: 60_000 });
    await Promise.all([spin(mapped, 300), spin(plain, 300)]);
    const got = await profiler.stop("p-map");
    const [, ofMapped, ofPlain] = got.threads;
    expect(ofMapped.threadId).toBe(mapped.threadId);
    // Every frame of its script moved, none left at the code V8 ran.
    const own = ofMapped.profile.nodes.filter((n) => n.callFrame.url === "file:///tasks.ts");
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((n) => n.callFrame.lineNumber === 41 && n.callFrame.columnNumber === 2)).toBe(
      true,
    );
    expect(sampledUrls(ofMapped.profile).has("[worker eval]")).toBe(false);
    // A thread that cannot say (not a pool thread: the question throws there) keeps its frames.
    expect(sampledUrls(ofPlain.profile).has("[worker eval]")).toBe(true);
  });

  it("a thread attached before, busy with synchronous code, starts at once", async () => {
    const t = spinner();
    threads.push(t);
    await spin(t, 1);
    await threadInspector().enable();
    for (let i = 0; i < 200 && !threadInspector().isAttached(t.threadId); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(threadInspector().isAttached(t.threadId)).toBe(true);
    const profiler = new CpuProfiler(() => [t.threadId]);
    const busy = spin(t, 2_000);
    await new Promise((r) => setTimeout(r, 100));
    await profiler.start("p2", { intervalUs: 1000, maxMs: 60_000 });
    await busy;
    const busyEnded = Date.now();
    const got = await profiler.stop("p2");
    expect(got.threads.map((x) => x.thread)).toEqual(["main", `thread ${t.threadId}`]);
    // Its profiler ran well before the 2 s task ended: interrupted to start, not waiting for it.
    const startedMs = (got.threads[1].profile.startTime + got.clockOffsetUs) / 1000;
    expect(busyEnded - startedMs).toBeGreaterThan(1_000);
  });

  it("one profile at a time; an unknown id is refused; a profile past maxMs is kept to be fetched", async () => {
    const profiler = new CpuProfiler(() => []);
    await profiler.start("a", { intervalUs: 1000, maxMs: 50 });
    await expect(profiler.start("b", { intervalUs: 1000, maxMs: 50 })).rejects.toThrow(
      /a profile \(a\) is under way on this worker already/,
    );
    await expect(profiler.stop("b")).rejects.toThrow(/no profile "b" on this worker/);
    await new Promise((r) => setTimeout(r, 200));
    const got = await profiler.stop("a");
    expect(got.timedOut).toBe(true);
    expect(got.threads.map((t) => t.thread)).toEqual(["main"]);
    // Free again.
    await profiler.start("c", { intervalUs: 1000, maxMs: 60_000 });
    profiler.close();
    expect(profiler.current).toBeNull();
  });

  it("closed, or closed while starting, it starts nothing (a request late for its close)", async () => {
    const profiler = new CpuProfiler(() => []);
    const starting = profiler.start("a", { intervalUs: 1000, maxMs: 60_000 });
    profiler.close();
    await expect(starting).rejects.toThrow("cannot profile: closing");
    expect(profiler.current).toBeNull();
    await expect(profiler.start("b", { intervalUs: 1000, maxMs: 60_000 })).rejects.toThrow(
      "cannot profile: closing",
    );
    expect(profiler.current).toBeNull();
  });
});
