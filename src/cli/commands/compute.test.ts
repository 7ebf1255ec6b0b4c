import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { closeTestClusters, testCluster } from "../../client/testCluster.ts";
import { WIRE_PROTOCOL_VERSION, weftVersion } from "../../protocol/version.ts";
import { Scheduler } from "../../scheduler/scheduler.ts";
import { FakeScheduler } from "../../worker/testScheduler.ts";
import type { Worker } from "../../worker/worker.ts";
import {
  cliScheduler,
  cliWorker,
  testContext as context,
  runWeft as weft,
} from "../testContext.ts";
import { weftProcess } from "../testWeftProcess.ts";
import { main } from "../weft.ts";
import { runScheduler } from "./schedulerAction.ts";
import { runWorker } from "./workerAction.ts";

const BENCH_TASKS = fileURLToPath(new URL("../../bench/clusterTasks.ts", import.meta.url));
const GRAPH_MODULE = fileURLToPath(new URL("./testGraph.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "weft-run-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function jsonFile(name: string, content: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(content));
  return file;
}

const GRAPH = {
  graph: {
    a: ["inc", 1],
    b: ["add", "a", 10],
    parts: ["load", 0, 6],
    even: ["split", "parts", 2, 0],
  },
  keys: ["b", "even"],
  tasks: [BENCH_TASKS],
};

/** A task module at `file` defining `name`, a task that sleeps its argument's ms; its path. */
function sleepTaskModule(file: string, name: string): string {
  const weftIndex = new URL("../../client/index.ts", import.meta.url).href;
  writeFileSync(
    file,
    `import { defineTask } from ${JSON.stringify(weftIndex)};\n` +
      `defineTask(${JSON.stringify(name)}, (ms) => new Promise((r) => setTimeout(() => r(ms), ms)));\n`,
  );
  return file;
}

describe("weft run, scheduler, worker", () => {
  it("--help on each", async () => {
    for (const cmd of ["run", "scheduler", "worker", "status", "retire"]) {
      const r = await weft([cmd, "--help"]);
      expect(r.code, cmd).toBe(0);
      expect(r.out).toMatch(new RegExp(`^Usage: weft ${cmd} `));
    }
  });

  it("weft run computes a JSON graph on an embedded cluster", async () => {
    const r = await weft(["run", jsonFile("g.json", GRAPH), "--executor", "inline", "--validate"]);
    expect(r.err).toMatch(/weft run: 4\/4 tasks \(100%\)/);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ b: 12, even: [0, 2, 4] });
  });

  it("weft run --task-stream writes the task runs, also of a graph that fails", async () => {
    const stream = join(dir, "stream.json");
    const r = await weft([
      "run",
      jsonFile("ts.json", GRAPH),
      "--executor",
      "inline",
      "--no-progress",
      "--task-stream",
      stream,
    ]);
    expect(r).toMatchObject({ code: 0, err: "" });
    const runs = JSON.parse(readFileSync(stream, "utf8")) as { key: string; status: string }[];
    expect(runs.map((x) => x.key).sort()).toEqual(["a", "b", "even", "parts"]);
    expect(runs.every((x) => x.status === "OK")).toBe(true);
    const bad = jsonFile("ts-bad.json", {
      graph: { x: ["split", null, 2, 0] },
      tasks: [BENCH_TASKS],
    });
    const failed = await weft([
      "run",
      bad,
      "--executor",
      "inline",
      "--no-progress",
      "--task-stream",
      stream,
    ]);
    expect(failed.code).toBe(1);
    expect(JSON.parse(readFileSync(stream, "utf8"))).toMatchObject([{ key: "x", status: "error" }]);
    const unwritable = await weft([
      "run",
      jsonFile("ts2.json", GRAPH),
      "--executor",
      "inline",
      "--no-progress",
      "--task-stream",
      join(dir, "no-such-dir", "s.json"),
    ]);
    // Said before computing anything: the file is written only once the graph is done.
    expect(unwritable.code).toBe(2);
    expect(unwritable.out).toBe("");
    expect(unwritable.err).toBe(
      `weft run: --task-stream ${join(dir, "no-such-dir", "s.json")}: no such directory: ${join(dir, "no-such-dir")}\n`,
    );
  });

  it("weft run --profile writes the workers' profile once the values are printed", async () => {
    const path = join(dir, "run.cpuprofile");
    const r = await weft([
      "run",
      jsonFile("prof.json", GRAPH),
      "--executor",
      "inline",
      "--no-progress",
      "--profile",
      path,
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ b: 12, even: [0, 2, 4] });
    expect(r.err).toMatch(
      /^weft run: profile of 1 thread written to .*run\.cpuprofile \(\d+\.\d s busy(: .*)?\)\n$/,
    );
    const written = JSON.parse(readFileSync(path, "utf8")) as {
      nodes: unknown[];
      samples: unknown[];
    };
    expect(written.nodes.length).toBeGreaterThan(1);
    const unwritable = await weft([
      "run",
      jsonFile("prof2.json", GRAPH),
      "--executor",
      "inline",
      "--no-progress",
      "--profile",
      join(dir, "no-such-dir", "p.cpuprofile"),
    ]);
    // Said before computing anything: the profile is written only once the graph is done.
    expect(unwritable.code).toBe(2);
    expect(unwritable.out).toBe("");
    expect(unwritable.err).toBe(
      `weft run: --profile ${join(dir, "no-such-dir", "p.cpuprofile")}: no such directory: ${join(dir, "no-such-dir")}\n`,
    );
  });

  it("weft run --profile on pool threads, in a process of its own, ends with the values and the profile", async () => {
    // In process the test runner holds the event loop: a profiler waiting for the pool
    // threads' inspector answers, which hold none, once let `weft run` end with exit 13.
    const path = join(dir, "threads.cpuprofile");
    const { code, out, err } = await weftProcess([
      "run",
      jsonFile("prof3.json", GRAPH),
      "--no-progress",
      "--profile",
      path,
    ]);
    expect({ code, err }).toMatchObject({ code: 0, err: expect.stringMatching(/written to/) });
    expect(JSON.parse(out)).toEqual({ b: 12, even: [0, 2, 4] });
    expect(err).toMatch(/^weft run: profile of [3-9] threads written to .*threads\.cpuprofile/);
  }, 60_000);

  it("weft run --profile, inline in a process of its own, puts a TypeScript task's function at its line", async () => {
    // In its own process, as a user runs it: the test runner loads modules its own way,
    // and Node.js keeps no source map of them.
    const tasks = fileURLToPath(new URL("../../client/profileTestTasks.ts", import.meta.url));
    const path = join(dir, "inline.cpuprofile");
    const graph = jsonFile("spin.json", { graph: { s: ["spinFor", 300] }, tasks: [tasks] });
    const { code, err } = await weftProcess([
      "run",
      graph,
      "--executor",
      "inline",
      "--no-progress",
      "--profile",
      path,
    ]);
    expect({ code, err }).toMatchObject({ code: 0, err: expect.stringMatching(/written to/) });
    const written = JSON.parse(readFileSync(path, "utf8")) as {
      nodes: { callFrame: { functionName: string; url: string; lineNumber: number } }[];
    };
    const spin = written.nodes.find((n) => n.callFrame.functionName === "profiledSpin");
    const declared = readFileSync(tasks, "utf8")
      .split("\n")
      .findIndex((line) => line.includes("function profiledSpin("));
    // 0-based, as in any .cpuprofile; tsx's code of it is all on line 0.
    expect(spin?.callFrame).toMatchObject({ url: pathToFileURL(tasks).href, lineNumber: declared });
  }, 60_000);

  it("weft run computes a module's Map graph, Maps printed as objects", async () => {
    const quiet = await weft(["run", GRAPH_MODULE, "--executor", "inline", "--no-progress"]);
    expect(quiet.err).toBe("");
    const r = await weft(["run", GRAPH_MODULE, "--executor", "inline"]);
    expect(r.err).toMatch(/weft run: 4\/4 tasks \(100%\)\n$/);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ total: 25, words: { x: 2, y: 1 } });
    // Progress counts the tasks the named keys need.
    const only = await weft(["run", GRAPH_MODULE, "--executor", "inline", "--keys", "total"]);
    expect(only.err).toMatch(/weft run: 3\/3 tasks \(100%\)\n$/);
    expect(JSON.parse(only.out)).toEqual({ total: 25 });
  });

  it("weft run --key names a key exactly, commas and spaces kept, beside --keys", async () => {
    const tupleKeys = jsonFile("tuple.json", {
      graph: {
        "('x', 0)": ["inc", 1],
        "('x', 1)": ["inc", 2],
        " y ": ["add", "('x', 0)", 10],
        z: ["inc", 5],
        "1": ["inc", 100],
      },
      tasks: [BENCH_TASKS],
    });
    const args = ["run", tupleKeys, "--executor", "inline", "--no-progress"];
    const r = await weft([...args, "--key", "('x', 0)", "--key", " y ", "--keys", "z"]);
    expect(r.err).toBe("");
    expect(JSON.parse(r.out)).toEqual({ "('x', 0)": 2, " y ": 12, z: 6 });
    // --keys splits at the commas of a tuple key: the parts are no keys.
    const split = await weft([...args, "--keys", "('x', 1)"]);
    expect(split.code).toBe(2);
    expect(split.err).toMatch(/no key "\('x'"/);
    // Each key its own value, though a JSON object lists an integer-like key first.
    const numbered = await weft([...args, "--keys", "z,1"]);
    expect(numbered.err).toBe("");
    expect(JSON.parse(numbered.out)).toEqual({ z: 6, "1": 101 });
    // --keys given twice: both lists, not the last alone.
    const repeated = await weft([...args, "--keys", "z", "--keys", "1", "--key", " y "]);
    expect(repeated.err).toBe("");
    expect(JSON.parse(repeated.out)).toEqual({ z: 6, "1": 101, " y ": 12 });
  });

  it("weft run --http-address serves the embedded scheduler's status page while it computes", async () => {
    const r = await weft([
      "run",
      jsonFile("h.json", GRAPH),
      "--executor",
      "inline",
      "--http-address",
      "127.0.0.1:0",
    ]);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/^weft run: status at http:\/\/127\.0\.0\.1:\d+\/status$/m);
    expect(JSON.parse(r.out)).toEqual({ b: 12, even: [0, 2, 4] });
    const bad = await weft(["run", jsonFile("h2.json", GRAPH), "--http-address", "nowhere"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^weft run: --http-address: HTTP address must be \[host\]:port/);
  });

  it("weft run refuses, before running anything, functions no task module defines and embedded options with --scheduler", async () => {
    const plain = jsonFile("plain.json", { x: ["inc", 1], y: ["add", "x", 2] });
    // Pool threads: this process has task functions of earlier tests registered.
    const none = await weft(["run", plain, "--no-progress"]);
    expect(none.code).toBe(2);
    expect(none.err).toBe(
      `weft run: ${plain}: no task module defines "inc", "add" (no task module was given: --tasks ./tasks.ts, or "tasks" in the graph file)\n`,
    );
    // A module given that registers nothing is not said to be missing.
    const exportsOnly = join(dir, "exportsOnly.mjs");
    writeFileSync(exportsOnly, "export function inc(x) { return x + 1; }\n");
    const unregistered = await weft(["run", plain, "--tasks", exportsOnly, "--no-progress"]);
    expect(unregistered.code).toBe(2);
    expect(unregistered.err).toBe(
      `weft run: ${plain}: no task module defines "inc", "add" (the task modules given define no task: a task module registers each function with defineTask(name, fn))\n`,
    );
    const typo = jsonFile("typo.json", { graph: { x: ["incc", 1] }, tasks: [BENCH_TASKS] });
    const r = await weft(["run", typo, "--executor", "inline", "--no-progress"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/no task module defines "incc" \(the task modules define .*\binc\b/);
    // Only the tasks the wanted keys need are checked.
    const partly = jsonFile("partly.json", {
      x: ["inc", 1],
      y: ["add", "x", 2],
      z: ["nosuch", "x"],
    });
    const needed = await weft([
      "run",
      partly,
      "--tasks",
      BENCH_TASKS,
      "--keys",
      "y",
      "--no-progress",
    ]);
    expect(needed.code).toBe(0);
    expect(JSON.parse(needed.out)).toEqual({ y: 4 });
    const given = await weft(["run", plain, "--tasks", BENCH_TASKS, "--executor", "inline"]);
    expect(given.code).toBe(0);
    expect(JSON.parse(given.out)).toEqual({ y: 4 });
    // --memory-limit: the embedded workers spill beyond 60% of it.
    const args = ["run", plain, "--tasks", BENCH_TASKS, "--executor", "inline", "--no-progress"];
    const limited = await weft([...args, "--memory-limit", "1kB"]);
    expect(JSON.parse(limited.out)).toEqual({ y: 4 });
    const auto = await weft([...args, "--memory-limit", "auto"]);
    expect(JSON.parse(auto.out)).toEqual({ y: 4 });
    const badLimit = await weft([...args, "--memory-limit", "some"]);
    expect(badLimit.code).toBe(2);
    expect(badLimit.err).toMatch(/--memory-limit must be a size such as 64MiB/);
    const remoteLimit = await weft([
      "run",
      plain,
      "--scheduler",
      "tcp://127.0.0.1:1",
      "--memory-limit",
      "1GB",
    ]);
    expect(remoteLimit.err).toMatch(/--memory-limit applies to the embedded cluster only/);
    const remote = await weft(["run", plain, "--scheduler", "tcp://127.0.0.1:1", "--workers", "3"]);
    expect(remote.code).toBe(2);
    expect(remote.err).toMatch(/--workers applies to the embedded cluster only/);
    const many = await weft(["run", plain, "--workers", "1000000"]);
    expect(many.code).toBe(2);
    expect(many.err).toMatch(/--workers must be at most 256/);
  });

  it("weft run --connect-timeout bounds the wait for a scheduler that never answers", async () => {
    const plain = jsonFile("silent.json", { x: ["inc", 1] });
    // Accepts connections and never says a word: the registration waits for the timeout.
    const sockets: Socket[] = [];
    const silent = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const { port } = silent.address() as AddressInfo;
    try {
      const t0 = Date.now();
      const r = await weft([
        "run",
        plain,
        "--scheduler",
        `tcp://127.0.0.1:${port}`,
        "--connect-timeout",
        "300ms",
      ]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^weft run: .*registering with tcp:\/\/127\.0\.0\.1:\d+/);
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
    const embedded = await weft(["run", plain, "--connect-timeout", "300ms"]);
    expect(embedded.code).toBe(2);
    expect(embedded.err).toBe("weft run: --connect-timeout applies with --scheduler only\n");
    const bad = await weft([
      "run",
      plain,
      "--scheduler",
      "tcp://127.0.0.1:1",
      "--connect-timeout",
      "0",
    ]);
    expect(bad.code).toBe(2);
    expect(bad.err).toBe(
      "weft run: --connect-timeout must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h, got 0\n",
    );
    const long = await weft([
      "run",
      plain,
      "--scheduler",
      "tcp://127.0.0.1:1",
      "--connect-timeout",
      "1e10",
    ]);
    expect(long.code).toBe(2);
    expect(long.err).toMatch(/^weft run: --connect-timeout must be at most 2147483647 ms/);
  });

  it("weft run: what tasks print goes to stderr, the answer alone to stdout", async () => {
    const ctx = context();
    const tasks = join(dir, "printTasks.mts");
    const weftIndex = new URL("../../client/index.ts", import.meta.url).href;
    writeFileSync(
      tasks,
      `import { defineTask, print, warn } from ${JSON.stringify(weftIndex)};\n` +
        `defineTask("cli.shout", (x) => { print("hello", x); warn("careful"); return x; });\n`,
    );
    const graph = jsonFile("printing.json", { graph: { x: ["cli.shout", 1] }, tasks: [tasks] });
    const code = await main(
      ["node", "weft", "run", graph, "--executor", "inline", "--no-progress"],
      ctx,
    );
    expect(code).toBe(0);
    expect(JSON.parse(ctx.stdout.text)).toEqual({ x: 1 });
    // Before the answer: a task's lines reach the scheduler before its result does.
    expect(ctx.stderr.text).toContain("hello 1\n");
    expect(ctx.stderr.text).toContain("careful\n");
  });

  it("weft run: Ctrl-C while computing gives the terminal back, closes the cluster, exits 130", async () => {
    const ctx = context();
    Object.assign(ctx.stderr, { isTTY: true }); // the progress bar hides the cursor
    // A task module of its own: the inline executor shares this process's task registry.
    const tasks = sleepTaskModule(join(dir, "sleepTasks.mts"), "cli.sleep");
    const graph = jsonFile("interrupted.json", {
      graph: { a: ["cli.sleep", 20_000] },
      tasks: [tasks],
    });
    const running = main(["node", "weft", "run", graph, "--executor", "inline"], ctx);
    while (!ctx.stderr.text.includes("weft run [")) await sleep(20);
    const started = Date.now();
    process.emit("SIGINT", "SIGINT");
    expect(await running).toBe(130);
    expect(Date.now() - started).toBeLessThan(10_000);
    // Cursor shown and line wrapping back on, after the bar was drawn.
    const err = ctx.stderr.text;
    expect(err.lastIndexOf("\x1b[?25h")).toBeGreaterThan(err.lastIndexOf("weft run ["));
    expect(err).toMatch(/weft run: interrupted \(SIGINT\)\n$/);
    expect(ctx.stdout.text).toBe("");
    expect(process.listenerCount("SIGINT")).toBe(0);
  });

  it("weft run --scheduler --profile: Ctrl-C stops the workers' profilers, which profiled on for an hour", async () => {
    const tasks = sleepTaskModule(join(dir, "profiledSleepTasks.mts"), "cli.profiledSleep");
    const { cluster } = await testCluster({ workers: 1, taskModules: [tasks] });
    try {
      const graph = jsonFile("profiled.json", { a: ["cli.profiledSleep", 20_000] });
      const output = join(dir, "interrupted.cpuprofile");
      const ctx = context();
      const args = ["run", graph, "--scheduler", cluster.address, "--profile", output];
      const running = main(["node", "weft", ...args, "--no-progress"], ctx);
      const worker = cluster.workers[0] as unknown as { profiler: { current: string | null } };
      while (worker.profiler.current === null) await sleep(20);
      process.emit("SIGINT", "SIGINT");
      expect(await running).toBe(130);
      expect(ctx.stderr.text).toBe("weft run: interrupted (SIGINT)\n");
      // Stopped, not profiling on (weft profile then refused: "a profile is under way").
      expect(worker.profiler.current).toBeNull();
    } finally {
      await closeTestClusters();
    }
  });

  it("weft run prints a graph's literals that no task uses", async () => {
    const r = await weft(["run", jsonFile("lit.json", { a: 5, b: [] }), "--no-progress"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ a: 5, b: [] });
  });

  it("weft run reports a failing task with its remote stack (exit 1) and bad input (exit 2)", async () => {
    const bad = jsonFile("bad.json", { graph: { x: ["split", null, 2, 0] }, tasks: [BENCH_TASKS] });
    const r = await weft(["run", bad, "--executor", "inline", "--no-progress"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^weft run: task x failed: TypeError: .*\n\s+at .*clusterTasks\.ts/);
    const missing = await weft(["run", join(dir, "nope.json")]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/nope\.json: cannot read the graph/);
    const txt = await weft(["run", jsonFile("x.txt", {})]);
    expect(txt.code).toBe(2);
    expect(txt.err).toMatch(/expected a \.json graph or a module/);
    const noKey = await weft([
      "run",
      jsonFile("k.json", GRAPH),
      "--executor",
      "inline",
      "--keys",
      "zz",
    ]);
    expect(noKey.code).toBe(2);
    expect(noKey.err).toMatch(/no key "zz"/);
    const noneNamed = await weft(["run", jsonFile("k0.json", GRAPH), "--keys", " , "]);
    expect(noneNamed.code).toBe(2);
    expect(noneNamed.err).toBe("weft run: --keys names no key\n");
    expect(noKey.err).not.toMatch(/tasks \(/); // no progress line before the error
    const cycle = await weft(["run", jsonFile("c.json", { a: ["inc", "a"] }), "--no-progress"]);
    expect(cycle.code).toBe(2);
    expect(cycle.err).toMatch(/the graph has a cycle: a → a/);
    // Behind a wanted key (which buildGraph leaves to the scheduler): said before a
    // cluster starts too, not as the scheduler's InvalidGraph seconds later.
    const behind = {
      graph: { a: ["inc", "b"], b: ["inc", "a"], s: ["inc", "a"] },
      tasks: [BENCH_TASKS],
    };
    const refused = await weft([
      "run",
      jsonFile("cb.json", behind),
      "--executor",
      "inline",
      "--no-progress",
    ]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/: compute: the graph has a cycle: a → b → a\n$/);
    const noModule = await weft([
      "run",
      jsonFile("m.json", GRAPH),
      "--executor",
      "inline",
      "--tasks",
      join(dir, "nowhere.ts"),
    ]);
    expect(noModule.code).toBe(2);
    expect(noModule.err).toBe(
      `weft run: --tasks ${join(dir, "nowhere.ts")}: no such file: ${join(dir, "nowhere.ts")}\n`,
    );
    // Waited for as long as --connect-timeout (default 30 s), then refused.
    const noScheduler = await weft([
      "run",
      jsonFile("s.json", GRAPH),
      "--scheduler",
      "tcp://127.0.0.1:1",
      "--connect-timeout",
      "300ms",
    ]);
    expect(noScheduler.code).toBe(2);
    expect(noScheduler.err).toMatch(/still refused after 300 ms/);
  });

  it("TCP mode: weft scheduler, two weft workers and weft run --scheduler", async () => {
    const schedCtx = context();
    const {
      scheduler,
      stop: stopScheduler,
      done: schedDone,
    } = await cliScheduler(
      {
        listen: "tcp://127.0.0.1:0",
        workerTtl: "30000",
        logLevel: "silent",
        validate: true,
        maxFrameBytes: "64B", // every message of more than 64 bytes goes in several frames
      },
      schedCtx,
    );
    const address = scheduler.address;
    expect(schedCtx.stdout.text).toBe(`scheduler at ${address}\n`);

    const stops: (() => void)[] = [];
    const workers: Worker[] = [];
    const workerDone = [1, 2].map(() => {
      const ctx = context();
      return runWorker(
        address,
        {
          nthreads: "1",
          tasks: [BENCH_TASKS],
          listen: "tcp://127.0.0.1:0",
          executor: "inline",
          validate: true,
          logLevel: "silent",
          maxFrameBytes: "64",
          connectTimeout: "5000",
        },
        ctx,
        (w) => {
          workers.push(w);
          return new Promise<void>((resolve) => stops.push(resolve));
        },
      ).then(() => ctx);
    });
    while (workers.length < 2) await new Promise((r) => setTimeout(r, 5));

    const r = await weft([
      "run",
      jsonFile("tcp.json", { ...GRAPH, tasks: [] }),
      "--scheduler",
      address,
      "--max-frame-bytes",
      "0.064kB",
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ b: 12, even: [0, 2, 4] });

    // --tasks with --scheduler: the running workers import the module.
    const registry = new URL("../../worker/taskRegistry.ts", import.meta.url).href;
    const more = join(dir, "more-tasks.mjs");
    writeFileSync(
      more,
      `import { defineTask } from ${JSON.stringify(registry)};\ndefineTask("cli.triple", (x) => 3 * x);\n`,
    );
    const tripled = await weft([
      "run",
      jsonFile("tcp3.json", { graph: { t: ["cli.triple", 14] }, keys: ["t"] }),
      "--scheduler",
      address,
      "--tasks",
      more,
      "--no-progress",
      "--max-frame-bytes",
      "64B",
    ]);
    expect(tripled.err).toBe("");
    expect(JSON.parse(tripled.out)).toEqual({ t: 42 });
    const missing = await weft([
      "run",
      jsonFile("tcp4.json", GRAPH),
      "--scheduler",
      address,
      "--tasks",
      join(dir, "absent.mjs"),
      "--max-frame-bytes",
      "64B",
    ]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(
      /^weft run: loading task modules on tcp:.* failed: .*no such file on this worker's machine/,
    );

    for (const stop of stops) stop();
    for (const ctx of await Promise.all(workerDone)) {
      expect(ctx.stdout.text).toMatch(/^worker at tcp:\/\/127\.0\.0\.1:\d+ \(1 thread\) for tcp:/);
      expect(ctx.exitCode).toBe(0);
    }
    stopScheduler();
    await schedDone;
    expect(schedCtx.exitCode).toBe(0);
  });

  it("weft scheduler refuses an inproc:// address, which no other process can reach", async () => {
    const ctx = context();
    let served = false;
    await runScheduler(
      { listen: "inproc://x", workerTtl: "30000", logLevel: "silent" },
      ctx,
      () => {
        served = true;
        return Promise.resolve();
      },
    );
    expect(served).toBe(false);
    expect(ctx.exitCode).toBe(2);
    expect(ctx.stderr.text).toBe(
      "weft scheduler: cannot start: --listen inproc://x: workers and clients in other processes need tcp:// (or tls://)\n",
    );
  });

  it("weft worker refuses bad options with a clear message", async () => {
    const r = await weft(["worker", "tcp://127.0.0.1:1", "--nthreads", "0"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--nthreads must be a positive integer, got 0/);
    // Longer than a timer can wait: it timed out at once, "after 10000000000 ms".
    const long = await weft(["worker", "tcp://127.0.0.1:1", "--connect-timeout", "1e10"]);
    expect(long.code).toBe(2);
    expect(long.err).toMatch(/--connect-timeout must be at most 2147483647 ms .*, got 1e10/);
    const res = await weft(["worker", "tcp://127.0.0.1:1", "--resources", "GPU"]);
    expect(res.err).toMatch(/bad resource "GPU"/);
    const mem = await weft(["worker", "tcp://127.0.0.1:1", "--memory-limit", "lots"]);
    expect(mem.code).toBe(2);
    expect(mem.err).toMatch(/--memory-limit must be a size such as 64MiB or 4GB, got "lots"/);
    const target = await weft([
      "worker",
      "tcp://127.0.0.1:1",
      "--memory-limit",
      "1GiB",
      "--memory-target",
      "0",
    ]);
    expect(target.err).toMatch(/--memory-target must be a number in \(0, 1\], got 0/);
    const auto = await weft(["worker", "tcp://127.0.0.1:1", "--memory-limit", "autumn"]);
    expect(auto.err).toMatch(/--memory-limit must be a size such as 64MiB or 4GB, got "autumn"/);
    const restarts = await weft(["worker", "tcp://127.0.0.1:1", "--nanny", "--max-restarts", "-1"]);
    expect(restarts.code).toBe(2);
    expect(restarts.err).toMatch(/--max-restarts must be an integer ≥ 0, got -1/);
    // Without --memory-limit nothing is measured: --memory-measure was ignored.
    const measured = await weft([
      "worker",
      "tcp://127.0.0.1:1",
      "--memory-measure",
      "managed",
      "--death-timeout",
      "300ms",
    ]);
    expect(measured).toMatchObject({
      code: 2,
      err: "weft worker: cannot start: --memory-measure applies with --memory-limit only: without a memory budget nothing is spilled, paused or terminated\n",
    });
    // Dask's --memory-limit 0 is no limit: the memory options given with it did nothing.
    const none = await weft([
      "worker",
      "tcp://127.0.0.1:1",
      "--memory-limit",
      "0",
      "--memory-target",
      "0.5",
      "--death-timeout",
      "300ms",
    ]);
    expect(none).toMatchObject({
      code: 2,
      err: "weft worker: cannot start: --memory-target applies with --memory-limit only: without a memory budget nothing is spilled, paused or terminated\n",
    });
    // Without --nanny nothing restarts the worker: the option was ignored, even a bad value.
    for (const n of ["3", "x"]) {
      const alone = await weft([
        "worker",
        "tcp://127.0.0.1:1",
        "--max-restarts",
        n,
        "--death-timeout",
        "300ms",
      ]);
      expect(alone.code).toBe(2);
      expect(alone.err).toBe(
        "weft worker: cannot start: --max-restarts applies with --nanny only (without a nanny nothing starts the worker again)\n",
      );
    }
    const pause = await weft([
      "worker",
      "tcp://127.0.0.1:1",
      "--memory-limit",
      "1GiB",
      "--memory-pause",
      "80%",
    ]);
    expect(pause.err).toMatch(/--memory-pause must be a number in \(0, 1\] or off, got 80%/);
    const measure = await weft(["worker", "tcp://127.0.0.1:1", "--memory-measure", "rss"]);
    expect(measure.code).toBe(2);
    expect(measure.err).toMatch(/Allowed choices are process, managed/);
    // The process is beyond 95% of 64 kB before it starts: it would close at once.
    const small = await weft(["worker", "tcp://127.0.0.1:1", "--memory-limit", "64kB"]);
    expect(small.code).toBe(2);
    expect(small.err).toMatch(
      /--memory-limit 62.50 kiB is too small: the process memory is .* already, beyond the 95% of it at which the worker closes \(--memory-terminate\); give a larger limit, or measure only the task values held/,
    );
    const dir = await weft([
      "worker",
      "tcp://127.0.0.1:1",
      "--memory-limit",
      "1GiB",
      "--spill-directory",
      "/no/such/dir",
    ]);
    expect(dir.err).toMatch(/--spill-directory: no such directory: "\/no\/such\/dir"/);
    const restart = await weft([
      "worker",
      "tcp://127.0.0.1:1",
      "--lifetime",
      "1h",
      "--lifetime-restart",
    ]);
    expect(restart.code).toBe(2);
    expect(restart.err).toMatch(/--lifetime-restart needs --nanny: nothing would start the worker/);
    const life = await weft(["worker", "tcp://127.0.0.1:1", "--lifetime", "soon"]);
    expect(life.code).toBe(2);
    expect(life.err).toMatch(
      /--lifetime must be a duration such as 1h, 30m or 90s: not a duration: "soon": invalid time unit "soon"/,
    );
    const stagger = await weft(["worker", "tcp://127.0.0.1:1", "--lifetime-stagger", "5m"]);
    expect(stagger.err).toMatch(/--lifetime-stagger and --lifetime-restart need --lifetime/);
    const size = await weft(["worker", "tcp://127.0.0.1:1", "--max-message-bytes", "lots"]);
    expect(size.code).toBe(2);
    expect(size.err).toMatch(/--max-message-bytes must be a size such as 64MiB or 4GB, got "lots"/);
    const tiny = await weft(["scheduler", "--max-message-bytes", "100"]);
    expect(tiny.code).toBe(2);
    expect(tiny.err).toMatch(
      /--max-message-bytes must be at least 64KiB .*got "100" \(100 bytes; a size without a unit is in bytes\)/,
    );
    const sched = await weft(["scheduler", "--max-frame-bytes", "0"]);
    expect(sched.code).toBe(2);
    expect(sched.err).toMatch(/--max-frame-bytes must be a size/);
    // Limits are checked even where they are not used (no --scheduler: an embedded cluster).
    const run = await weft(["run", "graph.json", "--max-frame-bytes", "3GiB"]);
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/--max-frame-bytes must be an integer from 1 to 2147483647/);
  });

  it("weft worker exits 2 saying why when the scheduler runs another weft version", async () => {
    // A newer scheduler that does not check the worker's version, over TCP as across machines.
    const newer = await FakeScheduler.start({
      address: "tcp://127.0.0.1:0",
      replyVersion: { protocolVersion: WIRE_PROTOCOL_VERSION + 1, weftVersion: "99.0.0" },
    });
    try {
      const r = await weft([
        "worker",
        newer.address,
        "--executor",
        "inline",
        "--log-level",
        "silent",
      ]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(
        `weft worker: cannot start: the scheduler at ${newer.address} speaks wire protocol ${WIRE_PROTOCOL_VERSION + 1} (weft 99.0.0) and this worker wire protocol ${WIRE_PROTOCOL_VERSION} (weft ${weftVersion()}): run the same weft version on the scheduler, workers and clients\n`,
      );
      await newer.waitFor((m) => m.op === "disconnected");
    } finally {
      await newer.close();
    }
  });

  it("weft worker exits 1 saying why when it loses the scheduler", async () => {
    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      logger: pino({ level: "silent" }),
    });
    const ctx = context();
    const { done } = await cliWorker(scheduler.address, ctx);
    await scheduler.close();
    await done;
    expect(ctx.exitCode).toBe(1);
    expect(ctx.stderr.text).toMatch(/weft worker: stopped: lost the connection to the scheduler/);
  });
});
