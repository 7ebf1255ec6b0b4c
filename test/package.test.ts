/**
 * The package as a dependent project gets it: the build (`npm run build`, run by
 * `npm test` before the tests), its entry points and types, the files `npm pack`
 * ships, and the runtime dependencies the build imports.
 */

import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../src/cli/commands/index.ts";

const run = promisify(execFile);
const root = fileURLToPath(new URL("..", import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as {
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, string | { types: string; default: string }>;
  dependencies: Record<string, string>;
};

function built(): void {
  if (!existsSync(`${root}dist/client/index.js`)) {
    throw new Error("no build in dist/: run `npm run build` first (npm test does)");
  }
}

/**
 * Import one of the package's entry points, as a dependent project would. Not a
 * literal `import("weft")`: the type-check runs before the build exists.
 */
function importPackage(specifier: string): Promise<unknown> {
  return import(specifier);
}

function* jsFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) yield* jsFiles(path);
    else if (/\.m?js$/.test(e.name)) yield path;
  }
}

describe("the package", () => {
  it("every entry point resolves to the build, with its types", async () => {
    built();
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target === "string") continue;
      expect(existsSync(`${root}${target.default}`), target.default).toBe(true);
      expect(existsSync(`${root}${target.types}`), target.types).toBe(true);
      const mod = (await importPackage(`weft${subpath.slice(1)}`)) as Record<string, unknown>;
      expect(Object.keys(mod).length, subpath).toBeGreaterThan(0);
    }
    const main = (await importPackage("weft")) as Record<string, unknown>;
    for (const name of [
      "Client",
      "LocalCluster",
      "defineTask",
      "secede",
      "rejoin",
      "literal",
      "TaskError",
      "ConnectError",
      "ResultFetchError",
    ]) {
      expect(main[name], name).toBeDefined();
    }
    // Names the docs tell users to import from these entry points.
    const comm = (await importPackage("weft/comm")) as Record<string, unknown>;
    expect(comm.ClonedValue).toBeDefined();
    const worker = (await importPackage("weft/worker")) as Record<string, unknown>;
    expect(worker.TaskError).toBeDefined();
    expect(pkg.exports["."]).toEqual({ types: pkg.types, default: pkg.main });
  });

  it("imports at run time only Node.js built-ins and its dependencies", () => {
    built();
    const allowed = new Set([...builtinModules, ...Object.keys(pkg.dependencies)]);
    const bare =
      /(?:^|[\s;])(?:import|export)\b[^"'`]*?from\s*["']([^"'./][^"']*)["']|import\(\s*["']([^"'./][^"']*)["']\s*\)/g;
    const missing = new Set<string>();
    for (const file of [...jsFiles(`${root}dist`), `${root}bin/weft.js`]) {
      for (const m of readFileSync(file, "utf8").matchAll(bare)) {
        const spec = (m[1] ?? m[2]).replace(/^node:/, "");
        const name = spec.startsWith("@")
          ? spec.split("/").slice(0, 2).join("/")
          : spec.split("/")[0];
        if (!allowed.has(name)) missing.add(`${name} (${file.slice(root.length)})`);
      }
    }
    expect([...missing]).toEqual([]);
  });

  it("npm pack ships the build, the command, the docs and the license, not the sources", async () => {
    built();
    const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: root,
    });
    const files = (JSON.parse(stdout) as [{ files: { path: string }[] }])[0].files.map(
      (f) => f.path,
    );
    for (const f of [
      "dist/client/index.js",
      "dist/client/index.d.ts",
      "dist/worker/threadBootstrap.mjs",
      "dist/util/uploadResolve.mjs",
      "bin/weft.js",
      "LICENSE",
      "README.md",
      "docs/client.md",
    ]) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => f.startsWith("src/") || /\.test\./.test(f))).toEqual([]);
    expect(files.filter((f) => /(^|\/)test[A-Z]\w*\.|testing\./.test(f))).toEqual([]);
  });

  it("the source maps carry the sources, which the package does not ship", () => {
    built();
    // Stack traces through a TypeScript task module (loaded through tsx, which turns
    // source maps on) and debuggers follow them to src/…, absent from the package.
    const maps = [...jsFiles(`${root}dist`)].map((f) => `${f}.map`).filter((f) => existsSync(f));
    expect(maps.length).toBeGreaterThan(0);
    const without = maps.filter((f) => {
      const map = JSON.parse(readFileSync(f, "utf8")) as {
        sources: string[];
        sourcesContent?: (string | null)[];
      };
      return map.sources.some((_, i) => typeof map.sourcesContent?.[i] !== "string");
    });
    expect(without.map((f) => f.slice(root.length))).toEqual([]);
  });

  it("the built command runs without the sources", async () => {
    built();
    const weft = (arg: string) =>
      `const { main } = await import(${JSON.stringify(`${root}dist/cli/weft.js`)}); process.exitCode = await main(["node", "weft", ${JSON.stringify(arg)}]);`;
    const { stdout } = await run(process.execPath, [
      "--input-type=module",
      "-e",
      weft("--version"),
    ]);
    expect(stdout.trim()).toBe(JSON.parse(readFileSync(`${root}package.json`, "utf8")).version);
    // Neither --version nor the help that lists the commands loads any command's module.
    const help = await run(process.execPath, ["--input-type=module", "-e", weft("--help")]);
    expect(help.stdout).toMatch(/^Usage: weft \[options\] \[command\]\n/);
    expect(help.stdout).toContain("\n  bench [options] [command] ");
    // Each command's definition, and what it runs (imported only then), load from the build.
    const commands = `${root}dist/cli/commands/`;
    const loadAll = `const { COMMANDS } = await import(${JSON.stringify(`${commands}index.js`)});
      const { existsSync } = await import("node:fs");
      let n = 0;
      for (const c of COMMANDS) {
        await c.load();
        const action = ${JSON.stringify(commands)} + c.name + "Action.js";
        if (existsSync(action)) { await import(action); n++; }
      }
      console.log(COMMANDS.length, n);`;
    const loaded = await run(process.execPath, ["--input-type=module", "-e", loadAll]);
    const actions = readdirSync(`${root}src/cli/commands`).filter((f) => f.endsWith("Action.ts"));
    expect(loaded.stdout.trim()).toBe(`${COMMANDS.length} ${actions.length}`);
  });

  it("the built weft bench cluster runs the benchmark's graphs and tasks from the build", async () => {
    built();
    // In the benchmark's child (as weft bench starts it), so that the build, not the
    // sources a checkout's bin/weft.js prefers, runs the benchmark.
    const args = ["bench", "cluster", "--graphs", "map", "--scale", "0.01", "--runs", "1"];
    const script = `const { main } = await import(${JSON.stringify(`${root}dist/cli/weft.js`)}); process.exitCode = await main(${JSON.stringify(["node", "weft", ...args, "--warmup", "0"])});`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      env: { ...process.env, WEFT_BENCH_CHILD: "1" },
    });
    const [config, map] = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(config).toMatchObject({ bench: "cluster", runs: 1 });
    expect(map).toMatchObject({ graph: "map", tasks: 100, checked: true });
  });

  it("the built scheduler answers a handshake with weft's version, and refuses an older client", async () => {
    built();
    const dist = (path: string) => JSON.stringify(`${root}dist/${path}`);
    const script = `
      const { Scheduler } = await import(${dist("scheduler/index.js")});
      const { connect } = await import(${dist("comm/index.js")});
      const s = await Scheduler.start({ listen: "inproc://pkg" });
      const c = await connect(s.address);
      await c.send({ op: "register-client", clientId: "old" });
      console.log(JSON.stringify(await c.recv()));
      await s.close();`;
    const { stdout, stderr } = await run(process.execPath, ["--input-type=module", "-e", script], {
      env: { ...process.env, WEFT_LOG_LEVEL: "warn" },
    });
    const version = JSON.parse(readFileSync(`${root}package.json`, "utf8")).version;
    const reply = JSON.parse(stdout) as Record<string, unknown>;
    expect(reply).toMatchObject({ status: "error", weftVersion: version });
    expect(reply.message).toMatch(
      `which speaks wire protocol ${reply.protocolVersion} (weft ${version})`,
    );
    expect(stderr).toMatch(/refused a client/);
  });

  it("loads TypeScript modules through tsx, and says why a CommonJS one cannot be loaded", async () => {
    built();
    const dir = mkdtempSync(`${tmpdir()}/weft-cjs-`);
    try {
      writeFileSync(`${dir}/package.json`, '{"name": "cjs-tasks", "private": true}');
      const source = `import { defineTask } from ${JSON.stringify(`${root}dist/client/index.js`)};\nexport const t = defineTask("t", (x: number): number => x);\n`;
      writeFileSync(`${dir}/tasks.ts`, source);
      writeFileSync(`${dir}/tasks.mts`, source.replace('"t"', '"t2"'));
      const importer = JSON.stringify(`${root}dist/util/importModule.js`);
      const script = (file: string) =>
        `const { importModule } = await import(${importer}); const url = ${JSON.stringify(pathToFileURL(`${dir}/${file}`).href)}; try { const m = await importModule(url); const again = await importModule(url); console.log("loaded", Object.keys(m).join(), again === m ? "once" : "twice"); } catch (e) { console.log(e.message); }`;
      const mts = await run(process.execPath, ["--input-type=module", "-e", script("tasks.mts")]);
      // Imported twice (a second cluster, a graph module that is also a task module): one module.
      expect(mts.stdout.trim()).toBe("loaded t once");
      const cts = await run(process.execPath, ["--input-type=module", "-e", script("tasks.ts")]);
      expect(cts.stdout).toMatch(
        /tasks\.ts: it is loaded as CommonJS \(its package\.json has no "type": "module"\), which cannot import weft \(an ES module\): name it \.mts, or add "type": "module"/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a dependent TypeScript project can name the types of the public API", async () => {
    built();
    // Inside the checkout, so that `weft` resolves to this package (a self-reference).
    mkdirSync(`${root}.scratch`, { recursive: true });
    const dir = mkdtempSync(`${root}.scratch/consumer-`);
    try {
      writeFileSync(
        `${dir}/tsconfig.json`,
        JSON.stringify({
          compilerOptions: {
            strict: true,
            module: "nodenext",
            moduleResolution: "nodenext",
            target: "es2022",
            types: ["node"],
            declaration: true,
            emitDeclarationOnly: true,
            outDir: "out",
            rootDir: ".",
            skipLibCheck: false,
          },
          files: ["consumer.ts"],
        }),
      );
      // docs/scheduler.md and docs/replay.md: what the state machine and the replay
      // functions take and give.
      writeFileSync(
        `${dir}/consumer.ts`,
        `import {
  type ClientToSchedulerMessage,
  type SchedulerMessage,
  SchedulerState,
  type SchedulerToClientMessage,
  type SchedulerToWorkerMessage,
  type WorkerToSchedulerMessage,
} from "weft/scheduler/state";

const s = new SchedulerState({ validate: true });
const register: WorkerToSchedulerMessage = {
  op: "register-worker", address: "w1", nthreads: 2, resources: {}, stimulusId: "r1",
};
export const out: SchedulerMessage[] = s.handleStimulus({ kind: "worker-message", worker: "w1", msg: register });
export const step = (st: SchedulerState) => st.handleStimulus();
export const toWorker = (m: SchedulerMessage): SchedulerToWorkerMessage | SchedulerToClientMessage => m.msg;
export type FromClient = ClientToSchedulerMessage["op"];

// docs/replay.md: a dump loaded once, replayed and told.
import { type ClusterDump, clusterStory, loadDump, replayLoadedDump } from "weft/replay";
export const load = (file: string) => loadDump(file);
export function told(dump: ClusterDump) {
  return [replayLoadedDump(dump).report.ok, clusterStory(dump, ["x"])] as const;
}

// docs/client.md and docs/comm.md: gather's result, resources, TCP timeouts.
import type { Client, Future, GatheredValue, Resources } from "weft";
import type { TcpTimeouts } from "weft/comm";
export const gathered = (c: Client, f: { a: Future<number> }) => c.gather(f);
export type One = GatheredValue<Future<string>>;
export const needs: Resources = { GPU: 1 };
export const timeouts: TcpTimeouts = { stallTimeoutMs: 1_000 };

// docs/worker-state.md: the logs a story is told from.
import type { TransitionLog, WorkerState } from "weft/worker/state";
export const log = (s: WorkerState): TransitionLog => s.log;

// Types the API names, exported for test/publicTypes.test.ts: one per entry point.
import type { SimCluster, Simulation } from "weft/sim";
import type { ComputeTaskMsg } from "weft/scheduler/state";
import type { HeapSet, TaskState } from "weft/worker/state";
import type { Router, Scheduler } from "weft/scheduler";
import type { FutureHost } from "weft";
import type { PeerPool } from "weft/worker";
import type { Stream } from "weft/replay";
export const cluster = (sim: Simulation): SimCluster => sim;
export const compute = (m: SchedulerToWorkerMessage): ComputeTaskMsg | null =>
  m.op === "compute-task" ? m : null;
export const ready = (s: WorkerState): HeapSet<TaskState> => s.ready;
export const router = (s: Scheduler): Router => s.router;
export const host = (f: Future<number>): FutureHost => f.host;
export type Peers = PeerPool;
export type Parsed = Stream;
`,
      );
      const tsc = `${root}node_modules/typescript/bin/tsc`;
      const result = await run(process.execPath, [tsc, "-p", dir]).catch(
        (e: { stdout: string }) => e,
      );
      expect(result.stdout).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("a cluster of the build runs task modules on pool threads", async () => {
    built();
    const { LocalCluster } = (await importPackage(
      "weft",
    )) as typeof import("../src/client/index.ts");
    const tasks = new URL("../src/client/testTasks.ts", import.meta.url).href;
    const cluster = await LocalCluster.start({
      workers: 1,
      executor: "threads",
      taskModules: [tasks],
    });
    try {
      const client = await cluster.client();
      expect(await client.get({ a: ["inc", 1], b: ["add", "a", 10] })).toEqual({ b: 12 });
    } finally {
      await cluster.close();
    }
  });
});
