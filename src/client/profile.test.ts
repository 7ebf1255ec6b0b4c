import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { Scheduler } from "../scheduler/scheduler.ts";
import type { CpuProfile, WorkerProfile } from "../worker/profiler.ts";
import { Client } from "./client.ts";
import type { LocalCluster } from "./localCluster.ts";
import {
  busyMs,
  type ClusterProfile,
  mergeProfiles,
  mergeWorkerProfiles,
  profileWhile,
  type SchedulerRequest,
  threadTimes,
  topFunctions,
} from "./profile.ts";
import { spinFor } from "./profileTestTasks.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "./testCluster.ts";
import { inc } from "./testTasks.ts";

const PROFILE_TASKS = new URL("./profileTestTasks.ts", import.meta.url).href;

afterAll(closeTestClusters);

/**
 * `profileWhile` of the test cluster's workers and its scheduler (asked through
 * `schedulerRequest`) while a function returning 5 runs.
 */
function profiledWithScheduler(
  cluster: LocalCluster,
  client: Client,
  schedulerRequest: SchedulerRequest,
): Promise<ClusterProfile<number>> {
  return profileWhile(
    client.peers,
    client.id,
    async () => ({ addresses: cluster.workers.map((w) => w.address), unmatched: [] }),
    () => 5,
    { scheduler: true },
    schedulerRequest,
  );
}

/** A profile of one thread: root → f → g, samples of `ids` 1 ms apart. */
function threadProfile(name: string, ids: number[]): CpuProfile {
  const frame = (functionName: string, line: number) => ({
    functionName,
    scriptId: "1",
    url: `file:///${name}.js`,
    lineNumber: line,
    columnNumber: 0,
  });
  return {
    nodes: [
      { id: 1, callFrame: { ...frame("(root)", -1), url: "" }, children: [2] },
      { id: 2, callFrame: frame("f", 9), children: [3] },
      { id: 3, callFrame: frame("g", 19) },
    ],
    startTime: 5_000,
    endTime: 5_000 + (ids.length + 1) * 1000,
    samples: ids,
    timeDeltas: ids.map(() => 1000),
  };
}

describe("merging profiles", () => {
  it("puts each thread under a node of its own, one after the other, times adding up", () => {
    const merged = mergeProfiles([
      { label: "w1 thread 1", profile: threadProfile("a", [2, 3, 3]) },
      { label: "w2 thread 2", profile: threadProfile("b", [3, 3]) },
    ]);
    const byId = new Map(merged.nodes.map((n) => [n.id, n]));
    const root = byId.get(1);
    expect(root?.callFrame.functionName).toBe("(root)");
    const threads = (root?.children ?? []).map((id) => byId.get(id)?.callFrame.functionName);
    expect(threads).toEqual(["w1 thread 1", "w2 thread 2"]);
    // Every node listed once, every child and sample naming a listed node.
    expect(byId.size).toBe(merged.nodes.length);
    for (const n of merged.nodes) for (const c of n.children ?? []) expect(byId.has(c)).toBe(true);
    for (const s of merged.samples ?? []) expect(byId.has(s)).toBe(true);
    expect(merged.samples?.length).toBe(5);
    expect(merged.endTime - merged.startTime).toBe(5_000);
    const top = topFunctions(merged, 10);
    expect(top).toEqual([
      { functionName: "g", url: "file:///a.js", line: 20, selfMs: 2 },
      { functionName: "g", url: "file:///b.js", line: 20, selfMs: 2 },
      { functionName: "f", url: "file:///a.js", line: 10, selfMs: 1 },
    ]);
  });
});

describe("threads' times and the top functions", () => {
  it("a sample's time is to the next sample (none when they go back), in ms to a tenth", () => {
    const p = threadProfile("t", [2, 3, 3, 2]);
    // V8's clock can go back between samples: that sample counts no time, not less than none.
    p.timeDeltas = [1000, 1550, 0, -300];
    p.endTime = 5_000 + 5_000;
    // f: 1550 µs then (its last sample, from 7250 to the end at 10000) 2750 µs; g: 0 and 0.
    expect(threadTimes(p)).toEqual({ sampledMs: 4.3, idleMs: 0 });
    // g's samples took no time: it is not listed.
    expect(topFunctions(p, 5)).toEqual([
      { functionName: "f", url: "file:///t.js", line: 10, selfMs: 4.3 },
    ]);
  });

  it("names a nameless function (anonymous), and lists the n with the most time", () => {
    const p = threadProfile("t", [2, 3, 3]);
    p.nodes[1].callFrame.functionName = "";
    expect(topFunctions(p, 5).map((f) => [f.functionName, f.selfMs])).toEqual([
      ["g", 2],
      ["(anonymous)", 1],
    ]);
    expect(topFunctions(p, 1).map((f) => f.functionName)).toEqual(["g"]);
  });

  it("busy time is the time sampled less the idle time, over every thread", () => {
    const thread = (sampledMs: number, idleMs: number) => ({
      worker: "w",
      thread: "main",
      sampledMs,
      idleMs,
    });
    expect(busyMs([thread(4, 3), thread(10, 2.5)])).toBe(8.5);
  });

  it("merging workers' profiles adds up their lost threads and keeps each thread's root hits", () => {
    const profile = threadProfile("t", [2]);
    profile.nodes[0].hitCount = 3;
    const worker = (lostThreads: number, pid: number): WorkerProfile => ({
      pid,
      host: "h",
      clockOffsetUs: 0,
      timedOut: false,
      lostThreads,
      threads: [{ thread: "main", threadId: 0, profile }],
    });
    const merged = mergeWorkerProfiles({ a: worker(2, 1), b: worker(1, 2) });
    expect(merged.lostThreads).toBe(3);
    const threadNodes = merged.profile.nodes.filter((n) => / main$/.test(n.callFrame.functionName));
    expect(threadNodes.map((n) => [n.callFrame.functionName, n.hitCount])).toEqual([
      ["a main", 3],
      ["b main", 3],
    ]);
  });
});

describe("idle time", () => {
  it("counts V8's (idle) and piscina's wait for the next task as idle, and lists neither", () => {
    const frame = (functionName: string, url: string) => ({
      functionName,
      scriptId: "1",
      url,
      lineNumber: 0,
      columnNumber: 0,
    });
    const p: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame("(root)", ""), children: [2, 3, 4] },
        { id: 2, callFrame: frame("(idle)", "") },
        {
          id: 3,
          callFrame: frame("atomicsWaitLoop", "file:///x/node_modules/piscina/dist/worker.js"),
        },
        { id: 4, callFrame: frame("work", "file:///t.js") },
        // A function of that name elsewhere is no wait for a task.
        { id: 5, callFrame: frame("atomicsWaitLoop", "file:///mine.js") },
      ],
      startTime: 0,
      endTime: 6_000,
      samples: [2, 3, 3, 4, 5],
      timeDeltas: [1000, 1000, 1000, 1000, 1000],
    };
    expect(threadTimes(p)).toEqual({ sampledMs: 5, idleMs: 3 });
    expect(topFunctions(p, 5).map((f) => f.functionName)).toEqual(["work", "atomicsWaitLoop"]);
  });
});

describe("client.profile", () => {
  it("profiles the pool threads running tasks: the task's function is where the time went", async () => {
    const { client } = await testCluster({
      executor: "threads",
      workers: 2,
      taskModules: [CLIENT_TEST_TASKS, PROFILE_TASKS],
    });
    const path = join(tmpdir(), `weft-profile-${process.pid}.cpuprofile`);
    try {
      const got = await client.profile(
        async () => {
          const futures = client.map(spinFor, [400, 401, 402, 403], { pure: false });
          return (await client.gather(futures)).length;
        },
        { path, intervalUs: 500 },
      );
      expect(got.value).toBe(4);
      // Both workers' main thread is this process's: listed once.
      expect(got.threads.filter((t) => t.thread === "main")).toHaveLength(1);
      expect(
        got.threads.filter((t) => t.thread.startsWith("thread ")).length,
      ).toBeGreaterThanOrEqual(2);
      const spin = got.top.find((f) => f.functionName === "profiledSpin");
      expect(spin?.url).toMatch(/profileTestTasks\.ts$/);
      // At its line in the TypeScript source, not of the code tsx made of it (all line 1).
      const source = (await readFile(new URL(PROFILE_TASKS), "utf8")).split("\n");
      const declared = source.findIndex((line) => line.includes("function profiledSpin("));
      expect(spin?.line).toBe(declared + 1);
      const node = got.profile.nodes.find((n) => n.callFrame.functionName === "profiledSpin");
      expect(node?.callFrame.lineNumber).toBe(declared);
      // Its column, in the declaration (tsx's map places the function's name).
      const column = node?.callFrame.columnNumber ?? -1;
      expect(source[declared].slice(column)).toMatch(/^(profiledSpin)?\(/);
      // 1.6 s of spinning over two threads; most of it sampled in profiledSpin.
      expect(spin?.selfMs).toBeGreaterThan(800);
      const written = JSON.parse(await readFile(path, "utf8")) as CpuProfile;
      expect(written.nodes.length).toBe(got.profile.nodes.length);
      expect(written.samples?.length).toBe(got.profile.samples?.length);
    } finally {
      await rm(path, { force: true });
    }
  });

  it("with scheduler: true, profiles the scheduler's thread too, over TCP as in process", async () => {
    const { client } = await testCluster();
    const here = await client.profile(() => client.submit(inc, 1), { scheduler: true });
    expect(here.value).toBe(2);
    // In one process the scheduler's thread is the workers' main thread: listed once, as the scheduler's.
    expect(here.threads.map((t) => `${t.worker} ${t.thread}`)).toEqual(["scheduler main"]);

    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      logger: pino({ level: "silent" }),
    });
    try {
      const remote = await Client.connect(scheduler.address, { logger: pino({ level: "silent" }) });
      try {
        // No worker at all: the scheduler alone.
        const got = await remote.profile(() => remote.workers(), { scheduler: true });
        expect(got.value).toEqual([]);
        expect(got.threads.map((t) => t.worker)).toEqual(["scheduler"]);
        expect(got.profile.nodes.length).toBeGreaterThan(2);
        await expect(remote.profile(() => 1)).rejects.toThrow(
          /profile: no worker to profile \(none is connected\)/,
        );
        await expect(remote.profile(() => 1, { scheduler: "yes" as never })).rejects.toThrow(
          'profile: scheduler must be a boolean, got "yes"',
        );
      } finally {
        await remote.close();
      }
    } finally {
      await scheduler.close();
    }
  });

  it("a worker named that no connected worker is, beside one that is, is said in failedWorkers", async () => {
    const { client } = await testCluster();
    const got = await client.profile(() => 5, { workers: ["0", "nosuch"] });
    expect(got.value).toBe(5);
    expect(got.failedWorkers).toEqual([
      { worker: "nosuch", reason: "no connected worker matches it" },
    ]);
    expect(got.threads.length).toBeGreaterThan(0);
  });

  it("a worker lost meanwhile costs its own profile only, said in failedWorkers", async () => {
    const { cluster, client } = await testCluster({ executor: "threads", workers: 2 });
    const [kept, lost] = cluster.workers;
    const got = await client.profile(async () => {
      await lost.close();
      return client.submit(inc, 41);
    });
    expect(got.value).toBe(42);
    expect(got.failedWorkers.map((f) => f.worker)).toEqual([lost.address]);
    expect(got.threads.every((t) => t.worker === kept.address)).toBe(true);
    expect(got.threads.length).toBeGreaterThanOrEqual(2);
  });

  it("a scheduler that cannot give its profile costs that profile only", async () => {
    const { cluster, client } = await testCluster();
    const stopped: string[] = [];
    const schedulerRequest: SchedulerRequest = async (op, args) => {
      if (op === "profile-start") return "OK";
      stopped.push(String(args.id));
      throw new Error("the scheduler went away");
    };
    const got = await profiledWithScheduler(cluster, client, schedulerRequest);
    expect(got.value).toBe(5);
    expect(stopped).toHaveLength(1);
    expect(got.failedWorkers).toEqual([{ worker: "scheduler", reason: "the scheduler went away" }]);
    expect(got.threads.length).toBeGreaterThanOrEqual(1);
    expect(got.threads.every((t) => t.worker !== "scheduler")).toBe(true);
    // The workers were stopped: they take another profile.
    expect((await client.profile(() => 6)).value).toBe(6);
  });

  it("a scheduler answering profile-stop with what is no profile costs that profile only", async () => {
    const { cluster, client } = await testCluster();
    const good = { thread: "main", threadId: 0, profile: threadProfile("s", [2]) };
    const uneven = threadProfile("s", [2, 3]);
    uneven.timeDeltas = [1000];
    const answers: unknown[] = [
      "OK",
      // One thread of two is no thread profile.
      { pid: 1, host: "h", lostThreads: 0, threads: [good, { thread: "main" }] },
      // As many samples as time deltas, or it is no profile.
      { pid: 1, host: "h", lostThreads: 0, threads: [{ ...good, profile: uneven }] },
    ];
    for (const answer of answers) {
      const got = await profiledWithScheduler(cluster, client, async (op) =>
        op === "profile-start" ? "OK" : answer,
      );
      expect(got.failedWorkers).toEqual([
        { worker: "scheduler", reason: "it answered profile-stop with no profile" },
      ]);
      expect(got.threads.every((t) => t.worker !== "scheduler")).toBe(true);
    }
  });

  it("a path that cannot be written is refused before the code runs, rather than its value lost after", async () => {
    const { client } = await testCluster();
    let ran = 0;
    const missing = join(tmpdir(), `weft-profile-missing-${process.pid}`, "p.cpuprofile");
    await expect(client.profile(() => ++ran, { path: missing })).rejects.toThrow(
      /^profile: cannot write to .*weft-profile-missing-.*: no such directory: /,
    );
    expect(ran).toBe(0);
    // Nothing was started: the workers take a profile at once.
    expect((await client.profile(() => 7)).value).toBe(7);
  });

  it("the code's error wins over a profile that cannot be written once it is over, which rejects otherwise", async () => {
    const { client } = await testCluster();
    const dir = await mkdtemp(join(tmpdir(), "weft-profile-removed-"));
    const path = join(dir, "p.cpuprofile");
    try {
      // The code removes the directory, then throws: its error, not the write's, is rethrown
      // (the write's ENOENT took its place, the code's error lost).
      const mine = new Error("the code's own");
      const failed = await client
        .profile(
          async () => {
            await rm(dir, { recursive: true });
            throw mine;
          },
          { path },
        )
        .catch((e: unknown) => e);
      expect(failed).toBe(mine);
      // Without an error of the code's, the write's failure is the call's.
      await mkdir(dir);
      const unwritten = await client
        .profile(() => rm(dir, { recursive: true }).then(() => 1), { path })
        .catch((e: unknown) => e);
      expect(unwritten).toMatchObject({
        message: expect.stringMatching(/^profile: cannot write to .*p\.cpuprofile: ENOENT/),
        code: "ENOENT",
        path,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("an error of the code is rethrown once the profile is written; bad options are refused", async () => {
    const { client } = await testCluster();
    const path = join(tmpdir(), `weft-profile-err-${process.pid}.cpuprofile`);
    try {
      await expect(
        client.profile(
          async () => {
            throw new Error("boom");
          },
          { path },
        ),
      ).rejects.toThrow("boom");
      expect(JSON.parse(await readFile(path, "utf8")).nodes.length).toBeGreaterThan(1);
      // The workers are free again: a second profile starts.
      expect((await client.profile(() => 7)).value).toBe(7);
    } finally {
      await rm(path, { force: true });
    }
    await expect(client.profile(() => 1, { intervalUs: 5 })).rejects.toThrow(
      /profile: intervalUs must be an integer from 100 to 1000000, got 5/,
    );
    await expect(client.profile(() => 1, { maxMs: 0 })).rejects.toThrow(/profile: maxMs/);
    await expect(client.profile(() => 1, { path: 5 as never })).rejects.toThrow(
      "profile: path must be a file path or a file: URL, got 5",
    );
    await expect(client.profile(() => 1, [] as never)).rejects.toThrow(
      /^profile: options must be an object, got \[\]/,
    );
    await expect(client.profile(() => 1, { workers: "nobody" })).rejects.toThrow(
      /profile: no worker to profile \(none matches workers\)/,
    );
    await expect(client.profile("nope" as never)).rejects.toThrow(
      /profile: expected the code to profile, as a function/,
    );
  });
});
