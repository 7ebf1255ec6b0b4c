import { spawn } from "node:child_process";
/**
 * Real processes (tools/chaos/tcp.ts): a `weft scheduler` and two `weft worker`
 * processes; one worker is SIGKILLed while it holds a partition sum the rest of
 * the graph still needs, and the cluster must recompute it and answer right.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  buildIsCurrent,
  builtTaskModule,
  RUN_BUILD_VARIABLE,
} from "../src/cli/testBuiltCommand.ts";
import type { Client } from "../src/client/client.ts";
import {
  CHAOS_TASKS,
  chaosClient,
  chaosGraph,
  exitReason,
  killLeftBehind,
  main,
  type ProcessCommand,
  Processes,
  passedAll,
  runChaos,
  summaryLine,
} from "../tools/chaos/tcp.ts";

/**
 * The processes run the build when it is current, with the chaos tasks compiled
 * against it: through tsx, the scores of processes this file starts took some 20 s
 * of CPU more.
 */
const scratch = mkdtempSync(join(tmpdir(), "weft-chaos-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const command: ProcessCommand = buildIsCurrent()
  ? {
      env: { [RUN_BUILD_VARIABLE]: "1" },
      tasks: await builtTaskModule(CHAOS_TASKS, join(scratch, "tasks.mjs")),
    }
  : {};

const shown: string[] = [];
let procs = new Processes((line) => shown.push(line), command);
let client: Client | undefined;

afterEach(async () => {
  await client?.close();
  client = undefined;
  await procs.close();
  procs = new Processes((line) => shown.push(line), command);
  shown.length = 0;
});

const workerOptions = { executor: "inline", nthreads: 2, validate: true } as const;

describe("weft processes under a SIGKILL", () => {
  it("recompute what the dead worker held, with a replacement joining", async () => {
    const { address } = await procs.scheduler({ workerTtlMs: 30_000, validate: true });
    const workers = ["w0", "w1"].map((name) => procs.worker(name, address, workerOptions));
    const [a0, a1] = await Promise.all(workers.map((w) => w.started));
    client = await chaosClient(address, (line) => shown.push(line));
    expect((await client.workers()).map((w) => w.address).sort()).toEqual([a0, a1].sort());

    // 8 partitions, then 7 chain steps of 150 ms: the kill lands in the chain.
    const round = chaosGraph("t-", 8, 500, 150);
    const before = await client.counters();
    let answered = false;
    const answer = client.get(round.graph, { keys: [round.key] }).finally(() => {
      answered = true;
    });

    // Wait until every partition sum is in memory while at least three steps of
    // the chain are still to run: the last step is then not assigned yet, so the
    // last sum is held by the worker that computed it alone, and lost with it.
    let victim: (typeof workers)[number] | undefined;
    while (victim === undefined && !answered) {
      const merges = Array.from({ length: 8 }, (_, j) => `t-merge-${j}`);
      const [holders, counters] = await Promise.all([client.whoHas(merges), client.counters()]);
      const allHeld = merges.every((k) => (holders[k] ?? []).length > 0);
      if (allHeld && counters.tasksDone - before.tasksDone <= round.tasks - 3) {
        victim = workers.find((w) => holders[round.lastMerge].includes(w.address ?? ""));
      } else {
        await sleep(10);
      }
    }
    expect(victim, "the graph finished before the kill").toBeDefined();
    procs.kill(victim!);
    const survivor = workers.find((w) => w !== victim)!;
    const replacement = procs.worker("w2", address, workerOptions);

    expect((await answer)[round.key]).toBe(round.expected);
    const after = await client.counters();
    // The lost sum, and what it needed that died with it, were computed again.
    expect(after.tasksFinished - before.tasksFinished).toBeGreaterThan(round.tasks);
    expect(after.keysTransferred).toBeGreaterThan(before.keysTransferred);
    expect(after.tasksErred).toBe(0);

    // The dead worker is gone from the scheduler, the replacement in, and both compute.
    const a2 = await replacement.started;
    expect((await client.workers()).map((w) => w.address).sort()).toEqual(
      [survivor.address, a2].sort(),
    );
    const again = chaosGraph("u-", 8, 500, 0);
    expect((await client.get(again.graph, { keys: [again.key] }))[again.key]).toBe(again.expected);
    expect(survivor.state).toBe("up");
    expect(procs.unexpectedExits).toBe(0);
    expect(shown).toEqual([]); // no error logged by any process or the client
  });
});

/** Two one-thread inline workers, no kills, validation on: the rounds alone. */
const QUIET = {
  workers: 2,
  nthreads: 1,
  executor: "inline",
  intervalMs: 1_000,
  killRate: 0,
  freeze: false,
  roundTimeoutMs: 60_000,
  workerTtlMs: 3_000,
  validate: true,
} as const;

describe("npm run chaos:tcp", () => {
  it("runs rounds under kills and sums them up", async () => {
    const lines: string[] = [];
    const summary = await runChaos(
      {
        seed: 3,
        rounds: 3,
        workers: 2,
        nthreads: 1,
        executor: "inline",
        // Every tick hits while two workers are up: the first, 100 ms in, kills one
        // during round 0 (its replacement takes a second or more to register).
        intervalMs: 100,
        killRate: 1,
        freeze: false,
        roundTimeoutMs: 60_000,
        workerTtlMs: 3_000,
        validate: false,
      },
      (line) => lines.push(line),
      (line) => shown.push(line),
      procs,
    );
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^round 0: P=\d+ \(\d+ tasks\) ok \d+ ms, kills \d+, freezes 0$/);
    expect(passedAll(summary)).toBe(true);
    expect(summary.kills).toBeGreaterThan(0);
    expect(summaryLine(3, summary)).toMatch(
      /^seed 3: 3 rounds, 3 passed, 0 failed; \d+ kills, 0 freezes, 0 unexpected exits$/,
    );
    // Every process has exited.
    expect(procs.all.every((p) => p.child.exitCode !== null || p.child.signalCode !== null)).toBe(
      true,
    );
  });

  it("--scatter: rounds start from blocks the client scattered and replicated", async () => {
    const lines: string[] = [];
    const summary = await runChaos(
      {
        ...QUIET,
        seed: 4,
        // Round 1 trims and rebalances the blocks; round 3 retires a worker too.
        rounds: 4,
        scatter: true,
      },
      (line) => lines.push(line),
      (line) => shown.push(line),
      procs,
    );
    // No make tasks: P² parts, P merges and P-1 chain steps.
    const p = Number(/P=(\d+)/.exec(lines[0])?.[1]);
    expect(lines[0]).toMatch(new RegExp(`^round 0: P=${p} \\(${p * p + 2 * p - 1} tasks\\) ok `));
    expect(passedAll(summary)).toBe(true);
    expect(summary.retired).toBe(1);
  });

  it("--restart: a round restarts the cluster; the nannies' new workers compute the next", async () => {
    const lines: string[] = [];
    const summary = await runChaos(
      {
        ...QUIET,
        seed: 1,
        // Seed 1 restarts in round 3, 275 ms after submitting it.
        rounds: 5,
        nanny: true,
        restart: true,
      },
      (line) => lines.push(line),
      (line) => shown.push(line),
      procs,
    );
    expect(passedAll(summary)).toBe(true);
    // Its answer may come first on a fast machine; the round after runs on new workers.
    expect(lines[3]).toMatch(
      /^round 3: .* (cancelled by a restart after 275 ms|ok \d+ ms \(answered before its restart\)), /,
    );
    expect(lines[4]).toMatch(/^round 4: .* ok /);
    expect(summary.restartedWorkers).toBeGreaterThanOrEqual(2);
    expect(summary.unexpectedExits).toBe(0);
    expect(shown).toEqual([]);
  });

  it("--lifetime: workers retire by themselves and their nannies start new ones; every round answers right", async () => {
    const lines: string[] = [];
    const summary = await runChaos(
      { ...QUIET, seed: 3, rounds: 4, nanny: true, lifetimeMs: 1000 },
      (line) => lines.push(line),
      (line) => shown.push(line),
      procs,
    );
    expect(summary.failed).toBe(0);
    expect(summary.passed + summary.killedWorker).toBe(4);
    expect(summary.restartedWorkers).toBeGreaterThanOrEqual(1);
    expect(summary.unexpectedExits).toBe(0);
    expect(shown).toEqual([]);
  });

  it("--dynamic --actors: rounds of tasks that submit tasks, and of tasks reporting to an actor", async () => {
    const lines: string[] = [];
    const summary = await runChaos(
      { ...QUIET, seed: 5, rounds: 4, dynamic: true, actors: true },
      (line) => lines.push(line),
      (line) => shown.push(line),
      procs,
    );
    expect(passedAll(summary)).toBe(true);
    expect(lines[1]).toMatch(/^round 1: P=\d+ \(dynamic: tasks submit tasks\) ok /);
    expect(lines[3]).toMatch(/^round 3: P=(\d+) \(actors: \1 tasks report to one\) ok /);
    expect(shown).toEqual([]);
  });

  it("--tls: every connection over tls://", async () => {
    const lines: string[] = [];
    const summary = await runChaos(
      { ...QUIET, seed: 2, rounds: 2, tls: true },
      (line) => lines.push(line),
      (line) => shown.push(line),
      procs,
    );
    expect(passedAll(summary)).toBe(true);
    expect(procs.all.every((p) => p.address?.startsWith("tls://") === true)).toBe(true);
    expect(shown).toEqual([]);
  });

  it("a worker process of the run that outlives the harness's processes is found and killed", async () => {
    const bin = fileURLToPath(new URL("../bin/weft.js", import.meta.url));
    // A worker of a scheduler nobody runs: it waits for it, as an orphan would.
    const orphan = spawn(
      process.execPath,
      [bin, "worker", "tcp://127.0.0.1:9", "--connect-timeout", "60000"],
      { stdio: "ignore" },
    );
    try {
      await sleep(300);
      const said: string[] = [];
      expect(await killLeftBehind("tcp://127.0.0.1:9", (l) => said.push(l), 200)).toBe(1);
      expect(said[0]).toMatch(
        /^\[harness\] a worker process \(pid \d+\) outlived its nanny; killed$/,
      );
      await new Promise((r) => orphan.once("exit", r));
    } finally {
      orphan.kill("SIGKILL");
    }
  });

  it("the summary names the first unexpected exit, which fails the run", () => {
    const summary = {
      rounds: 2,
      passed: 2,
      failed: 0,
      killedWorker: 0,
      kills: 1,
      freezes: 0,
      retired: 0,
      pressured: 0,
      pausesSeen: 0,
      nannyRestarts: 0,
      restartedRounds: 0,
      restartedWorkers: 0,
      restartedOne: 0,
      unexpectedExits: 1,
      leftBehind: 0,
      firstUnexpectedExit: "worker-3 (code 3): weft worker: stopped: lost the scheduler",
    };
    expect(summaryLine(7, summary)).toBe(
      "seed 7: 2 rounds, 2 passed, 0 failed; 1 kills, 0 freezes, 1 unexpected exits " +
        "(first: worker-3 (code 3): weft worker: stopped: lost the scheduler)",
    );
    expect(passedAll(summary)).toBe(false);
  });

  it("names an uncaught error by its error line, not by the version line Node's report ends with", () => {
    const report = [
      "file:///work/src/worker/x.ts:10",
      "    throw new TypeError('boom');",
      "          ^",
      "",
      "TypeError: boom",
      "    at f (file:///work/src/worker/x.ts:10:11)",
      "",
      "Node.js v20.20.2",
    ];
    expect(exitReason(report)).toBe("TypeError: boom");
    expect(
      exitReason(["Error [ERR_STREAM_DESTROYED]: write after destroy", "", "Node.js v20.1.0"]),
    ).toBe("Error [ERR_STREAM_DESTROYED]: write after destroy");
    expect(exitReason(["weft worker: stopped: lost the scheduler"])).toBe(
      "weft worker: stopped: lost the scheduler",
    );
    expect(exitReason([])).toBe("nothing on stderr");
  });

  it("npm run chaos:tcp exits with main's code: 2 for a bad option, said in one line", async () => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        fileURLToPath(new URL("../tools/chaos/tcp.ts", import.meta.url)),
        "--seed",
        "x",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(err).toBe("chaos:tcp: --seed must be an integer >= 0\n");
    expect(code).toBe(2);
  });

  it("refuses bad options", async () => {
    await expect(main(["--kill-rate", "2"])).rejects.toThrow("--kill-rate must be");
    // Number() would read these as 16 and 1, and "" as 0.
    await expect(main(["--seed", "0x10"])).rejects.toThrow("--seed must be an integer >= 0");
    await expect(main(["--seed", ""])).rejects.toThrow("--seed must be an integer >= 0");
    await expect(main(["--kill-rate", "0b1"])).rejects.toThrow("--kill-rate must be");
    await expect(main(["--workers", "0"])).rejects.toThrow("--workers must be");
    await expect(main(["--nanny", "--freeze"])).rejects.toThrow(
      "--nanny (or --restart, --lifetime) and --freeze",
    );
    await expect(main(["--restart", "--freeze"])).rejects.toThrow(
      "--nanny (or --restart, --lifetime) and --freeze",
    );
    await expect(main(["--lifetime", "1000", "--freeze"])).rejects.toThrow(
      "--nanny (or --restart, --lifetime) and --freeze",
    );
    // Every round of a --scatter run computes the scattered graph: no dynamic or actor round.
    await expect(main(["--scatter", "--dynamic"])).rejects.toThrow(
      "--scatter and --dynamic: every round of a --scatter run computes the scattered graph",
    );
    await expect(main(["--scatter", "--actors"])).rejects.toThrow("--scatter and --actors");
    await expect(main(["--lifetime", "soon"])).rejects.toThrow("--lifetime must be");
    await expect(main(["--memory-pressure", "--memory-limit", "1MB"])).rejects.toThrow(
      "--memory-pressure sets the workers' memory limit",
    );
  });
});
