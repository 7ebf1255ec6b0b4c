import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spinFor } from "../../client/profileTestTasks.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "../../client/testCluster.ts";
import { inc } from "../../client/testTasks.ts";
import { refusingAddress, runWeft } from "../testContext.ts";

afterEach(closeTestClusters);

const PROFILE_TASKS = new URL("../../client/profileTestTasks.ts", import.meta.url).href;

describe("weft profile", () => {
  it("profiles the workers for --seconds, writes the profile and lists where the time went", async () => {
    const { cluster, client } = await testCluster({
      executor: "threads",
      workers: 1,
      taskModules: [CLIENT_TEST_TASKS, PROFILE_TASKS],
    });
    const output = join(tmpdir(), `weft-cli-profile-${process.pid}.cpuprofile`);
    try {
      // The pool thread up before the profile starts (by a task that is not the spin,
      // which must not be optimized before the profile starts), so that the profile
      // starts on it with the main thread's rather than when the spin makes the thread.
      await client.submitWith({ pure: false }, inc, 1);
      const profiling = runWeft(["profile", cluster.address, "--seconds", "2", "-o", output]);
      // Submitted once the profile has started on the pool thread too: code already
      // running, and optimized, when it starts is sampled as V8's "(program)" or under
      // the function it was inlined into (under load the thread's start lags the main
      // thread's, and the spin showed as its anonymous caller).
      const worker = cluster.workers[0] as unknown as {
        profiler: { current: string | null; run: { started: Map<number, Promise<boolean>> } };
      };
      for (let i = 0; i < 500 && (worker.profiler.run?.started.size ?? 0) === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(await Promise.all(worker.profiler.run.started.values())).toEqual([true]);
      await client.submitWith({ pure: false }, spinFor, 800);
      const r = await profiling;
      expect(r.code).toBe(0);
      expect(r.err).toMatch(/profiling the workers' threads for 2 s \(every 1000 µs\)/);
      expect(r.out).toMatch(/^weft profile: 2 threads on 1 worker: \d+\.\d s sampled/);
      expect(r.out).toContain(`written to ${output}`);
      expect(r.out).toMatch(new RegExp(`${cluster.workers[0].address} thread \\d+`));
      expect(r.out).toMatch(/profiledSpin {2}file:.*profileTestTasks\.ts:\d+/);
      const written = JSON.parse(await readFile(output, "utf8")) as { nodes: unknown[] };
      expect(written.nodes.length).toBeGreaterThan(2);

      // A short profile's summary as JSON, without and with the scheduler's thread.
      const quick = async (...extra: string[]) => {
        const r = await runWeft([
          "profile",
          cluster.address,
          "--seconds",
          "0.2",
          "-o",
          output,
          "--json",
          ...extra,
        ]);
        expect(r.code, extra.join(" ")).toBe(0);
        return JSON.parse(r.out) as { output: string; threads: { worker: string }[] };
      };
      const summary = await quick();
      expect(summary.output).toBe(output);
      expect(summary.threads).toHaveLength(2);
      const withScheduler = await quick("--with-scheduler");
      expect(withScheduler.threads.map((t) => t.worker)[0]).toBe("scheduler");
    } finally {
      await rm(output, { force: true });
    }
  });

  it("refuses bad usage (exit 2) and a --worker matching nobody (exit 1)", async () => {
    const { cluster } = await testCluster();
    for (const [args, message] of [
      [["--seconds", "0"], /--seconds must be a number above 0 and at most 3600, got "0"/],
      [["--interval-us", "10"], /--interval-us must be an integer from 100 to 1000000/],
      [["--top", "51"], /--top must be an integer from 0 to 50/],
    ] as const) {
      const r = await runWeft(["profile", cluster.address, ...args]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(message);
    }
    const r = await runWeft([
      "profile",
      cluster.address,
      "--seconds",
      "0.1",
      "--worker",
      "nobody",
      "-o",
      join(tmpdir(), "never-written.cpuprofile"),
    ]);
    expect(r.code).toBe(1);
    // In weft logs' words, naming what was given.
    expect(r.err).toBe(
      `weft profile: --worker nobody: no connected worker matches it (weft status ${cluster.address} lists them)\n` +
        `weft profile: no worker to profile: ${join(tmpdir(), "never-written.cpuprofile")} not written\n`,
    );
  });

  it("takes the bounds of --seconds, --interval-us and --top themselves, and no more", async () => {
    // Checked before connecting: a value taken goes on to the connection, which is refused.
    const address = await refusingAddress();
    const output = join(tmpdir(), "never-written.cpuprofile");
    const profile = (...args: string[]) =>
      runWeft(["profile", address, "--connect-timeout", "100ms", "-o", output, ...args]);
    for (const args of [
      ["--seconds", "3600"],
      ["--interval-us", "100"],
      ["--interval-us", "1000000"],
      ["--top", "0"],
      ["--top", "50"],
      // Decimal, as every numeric option reads (digits alone refused these).
      ["--interval-us", "1e3"],
      ["--top", "1e1"],
    ]) {
      const r = await profile(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err, args.join(" ")).toMatch(/refused/);
      expect(r.err, args.join(" ")).not.toMatch(/ must be /);
    }
    for (const [args, message] of [
      [
        ["--seconds", "3600.5"],
        '--seconds must be a number above 0 and at most 3600, got "3600.5"',
      ],
      [["--seconds", ""], '--seconds must be a number above 0 and at most 3600, got ""'],
      // Read with Number, 0x10 profiled for 16 s.
      [["--seconds", "0x10"], '--seconds must be a number above 0 and at most 3600, got "0x10"'],
      [["--seconds", " 5 "], '--seconds must be a number above 0 and at most 3600, got " 5 "'],
      [["--interval-us", "99"], '--interval-us must be an integer from 100 to 1000000, got "99"'],
      [["--top", "1.5"], '--top must be an integer from 0 to 50, got "1.5"'],
      [["--top", "0x10"], '--top must be an integer from 0 to 50, got "0x10"'],
      [["--top", " 5"], '--top must be an integer from 0 to 50, got " 5"'],
    ] as const) {
      expect(await profile(...args)).toEqual({
        code: 2,
        out: "",
        err: `weft profile: ${message}\n`,
      });
    }
  });

  it("takes --seconds that are not whole milliseconds (1.0001 s, 0.0005 s)", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const output = join(tmpdir(), `weft-cli-profile-fraction-${process.pid}.cpuprofile`);
    try {
      for (const seconds of ["1.0001", "0.0005"]) {
        const r = await runWeft(["profile", cluster.address, "--seconds", seconds, "-o", output]);
        expect(r.err, seconds).toBe(
          `weft profile: profiling the workers' threads for ${seconds} s (every 1000 µs)…\n`,
        );
        expect(r.code, seconds).toBe(0);
        expect(r.out, seconds).toContain(`written to ${output}`);
      }
    } finally {
      await rm(output, { force: true });
    }
  });

  it("a --worker matching nobody beside one that does: said, and the other profiled (exit 1)", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const output = join(tmpdir(), `weft-cli-profile-some-${process.pid}.cpuprofile`);
    try {
      const r = await runWeft([
        "profile",
        cluster.address,
        "--seconds",
        "0.1",
        "--worker",
        "nobody",
        "--worker",
        cluster.workers[0].address,
        "-o",
        output,
        "--json",
      ]);
      expect(r.code).toBe(1);
      expect(r.err).toContain(
        `weft profile: --worker nobody: no connected worker matches it (weft status ${cluster.address} lists them)\n`,
      );
      const summary = JSON.parse(r.out) as { threads: { worker: string }[] };
      expect(new Set(summary.threads.map((t) => t.worker))).toEqual(
        new Set([cluster.workers[0].address]),
      );
    } finally {
      await rm(output, { force: true });
    }
  });

  it("refuses an -o it could not write before profiling (exit 2)", async () => {
    const missing = join(tmpdir(), `weft-no-such-dir-${process.pid}`, "p.cpuprofile");
    // Nothing listens there: the check comes before connecting.
    const r = await runWeft(["profile", "tcp://127.0.0.1:1", "-o", missing]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `weft profile: -o ${missing}: no such directory: ${join(tmpdir(), `weft-no-such-dir-${process.pid}`)}\n`,
    );
    const dir = await runWeft(["profile", "tcp://127.0.0.1:1", "-o", tmpdir()]);
    expect(dir.code).toBe(2);
    expect(dir.err).toBe(`weft profile: -o ${tmpdir()}: it is a directory\n`);
  });

  it("Ctrl-C ends the profile early: the time so far is written, the workers stop profiling, exit 130", async () => {
    const { cluster } = await testCluster({ executor: "threads", workers: 1 });
    const output = join(tmpdir(), `weft-cli-profile-int-${process.pid}.cpuprofile`);
    const listeners = process.listenerCount("SIGINT");
    try {
      const profiling = runWeft(["profile", cluster.address, "--seconds", "600", "-o", output]);
      const worker = cluster.workers[0] as unknown as { profiler: { current: string | null } };
      // Every profiler started: the command waits, and listens for SIGINT.
      while (process.listenerCount("SIGINT") === listeners) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(worker.profiler.current).not.toBeNull();
      const started = Date.now();
      process.emit("SIGINT", "SIGINT");
      const r = await profiling;
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(r.code).toBe(130);
      expect(r.out).toMatch(/^weft profile: 2 threads on 1 worker: /);
      expect(r.err).toMatch(/weft profile: interrupted \(SIGINT\) before 600 s\n$/);
      expect(JSON.parse(await readFile(output, "utf8"))).toHaveProperty("nodes");
      // Not left profiling for the next ten minutes: a new profile may start.
      expect(worker.profiler.current).toBeNull();
      expect(process.listenerCount("SIGINT")).toBe(listeners);
    } finally {
      await rm(output, { force: true });
    }
  });

  it("a scheduler lost while profiling ends it at once: exit 1, no empty profile written", async () => {
    const { cluster } = await testCluster({ executor: "threads", workers: 1 });
    const output = join(tmpdir(), `weft-cli-profile-lost-${process.pid}.cpuprofile`);
    await rm(output, { force: true });
    const listeners = process.listenerCount("SIGINT");
    const profiling = runWeft(["profile", cluster.address, "--seconds", "600", "-o", output]);
    // Every profiler started: the command waits, and listens for SIGINT.
    while (process.listenerCount("SIGINT") === listeners) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const started = Date.now();
    await cluster.scheduler.close();
    const r = await profiling;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toMatch(/weft profile: lost the scheduler: /);
    await expect(readFile(output)).rejects.toThrow(/ENOENT/);
  });
});
