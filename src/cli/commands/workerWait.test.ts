import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { Client } from "../../client/client.ts";
import { answerUnresolvedAtOnce } from "../../comm/testUnresolvedHost.ts";
import { memoryLogger } from "../../worker/testWorker.ts";
import { refusingAddress, runWeft, testContext } from "../testContext.ts";
import { main } from "../weft.ts";
import { liveSchedulerFromFile } from "./liveSchedulerFile.ts";
import { runScheduler } from "./schedulerAction.ts";

/** The `weft` command of this checkout. */
const WEFT_BIN = fileURLToPath(new URL("../../../bin/weft.js", import.meta.url));

const dir = mkdtempSync(join(tmpdir(), "weft-worker-wait-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ARGS = ["--executor", "inline", "--nthreads", "1", "--log-level", "silent"];

// The tests but the last, which fakes the clock, wait out real timeouts of their own
// (1.5 s, 0.3-0.5 s, a child's start): they do so side by side.
describe("weft worker waits for its scheduler, as Dask's", () => {
  it.concurrent("past --connect-timeout, which bounds each try only, when no --death-timeout is given", async () => {
    const address = await refusingAddress();
    const ctx = testContext();
    const worker = main(
      ["node", "weft", "worker", address, ...ARGS, "--connect-timeout", "200ms"],
      ctx,
    );
    await sleep(1_500);
    expect(ctx.stderr.text).toBe(""); // still waiting
    const scheduler = runScheduler(
      { listen: address, workerTtl: "30000", logLevel: "silent" },
      testContext(),
      (s) => s.closed,
    );
    const client = await Client.connect(address, { printTaskOutput: false });
    try {
      await client.waitForWorkers(1, { timeoutMs: 10_000 });
    } finally {
      await client.shutdown();
    }
    expect(await worker).toBe(0);
    await scheduler;
  }, 30_000);

  it.concurrent("--death-timeout bounds the whole start, as Dask's: a preload's weftSetup that never ends fails it, exit 2, saying what it was doing", async () => {
    const preload = join(dir, "never-set-up.mjs");
    writeFileSync(preload, "export function weftSetup() { return new Promise(() => {}); }\n");
    const scheduler = runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent" },
      testContext(),
      async (s) => {
        const started = Date.now();
        // Before, the start waited on the weftSetup for good: --death-timeout bounded the scheduler's wait only.
        const r = await runWeft(
          [
            "worker",
            s.address,
            ...ARGS,
            "--listen",
            "tcp://127.0.0.1:0",
            "--death-timeout",
            "500ms",
          ].concat(["--preload", preload]),
        );
        expect(r.code).toBe(2);
        expect(r.err).toMatch(
          /^weft worker: cannot start: the worker did not start within its death timeout \(--death-timeout, 500 ms\): it was still running its preload modules' weftSetup \(file:\/\/.*never-set-up\.mjs\); it closed\n$/,
        );
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(s.state.workers.size).toBe(0);
      },
    );
    await scheduler;
  }, 30_000);

  it.concurrent("--death-timeout gives up: exit 2, saying how long it tried; a bad one is refused", async () => {
    const started = Date.now();
    const r = await runWeft([
      "worker",
      await refusingAddress(),
      ...ARGS,
      // Durations as Dask writes them: both were refused, for a number was all they took.
      "--connect-timeout",
      "20s",
      "--death-timeout",
      "0.3s",
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      // Its first try may come only after the 300 ms on a loaded host.
      /^weft worker: cannot start: connection to tcp:\/\/127\.0\.0\.1:\d+ refused.*: (still refused after 300 ms|refused at its first try, made only after the 300 ms wait was over)\n$/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    const bad = await runWeft(["worker", "tcp://127.0.0.1:1", ...ARGS, "--death-timeout", "0"]);
    expect(bad).toMatchObject({
      code: 2,
      err: "weft worker: cannot start: --death-timeout must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h, got 0\n",
    });
    // An in-process address: nobody outside this process could reach the worker.
    for (const flag of ["--listen", "--contact-address"]) {
      const inproc = await runWeft(["worker", "tcp://127.0.0.1:1", ...ARGS, flag, "inproc://x"]);
      expect(inproc).toMatchObject({
        code: 2,
        err: `weft worker: cannot start: ${flag} inproc://x: the scheduler, clients and other workers are in other processes: give tcp:// (or tls://)\n`,
      });
    }
  });

  it.concurrent("waits for a scheduler whose host name does not resolve yet (a service, a batch job's host), naming why at the end", async ({
    onTestFinished,
  }) => {
    // The resolver's own error, but at once: its timing (over 400 ms on a loaded host) is
    // not what is tested. The context's hook: the tests run side by side.
    const restore = await answerUnresolvedAtOnce("no-such-host.invalid");
    onTestFinished(restore);
    const started = Date.now();
    const r = await runWeft([
      "worker",
      "tcp://no-such-host.invalid:8786",
      ...ARGS,
      "--death-timeout",
      "400ms",
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^weft worker: cannot start: connection to tcp:\/\/no-such-host\.invalid:8786 failed: getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid .*: still failing after 400 ms\n$/,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    // The same named by a scheduler file: read again, as for a refusal, until the end.
    const file = join(dir, "unresolved.json");
    writeFileSync(
      file,
      JSON.stringify({ type: "Scheduler", address: "tcp://no-such-host.invalid:8786" }),
    );
    const fromFile = await runWeft([
      "worker",
      "--scheduler-file",
      file,
      ...ARGS,
      "--death-timeout",
      "400ms",
    ]);
    expect(fromFile.code).toBe(2);
    expect(fromFile.err).toMatch(
      /^weft worker: cannot start: the scheduler at tcp:\/\/no-such-host\.invalid:8786 \(named by .*unresolved\.json\) still cannot be reached after 400 ms \(getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid\): is it running, and its file up to date\?\n$/,
    );
  });

  it.concurrent("under --nanny, a worker that gives up at --death-timeout ends the nanny (exit 2)", async () => {
    const r = await runWeft([
      "worker",
      await refusingAddress(),
      "--nanny",
      ...ARGS,
      "--death-timeout",
      "300ms",
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cannot start: .*still refused after 300 ms\n$/);
  }, 30_000);

  it.concurrent("says that it waits for the scheduler its file names, and SIGTERM ends the wait with exit 0", async () => {
    const file = join(dir, "stale.json");
    writeFileSync(file, JSON.stringify({ type: "Scheduler", address: await refusingAddress() }));
    const child = spawn(
      process.execPath,
      [WEFT_BIN, "worker", "--scheduler-file", file, "--executor", "inline", "--nthreads", "1"],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
    try {
      await Promise.race([
        (async () => {
          while (!stderr.includes("refuses connections")) await sleep(100);
        })(),
        exited,
        sleep(25_000),
      ]);
      const lines = stderr
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.map((l) => l.msg)).toEqual([
        expect.stringMatching(/^the scheduler the scheduler file names refuses connections/),
      ]);
      expect(lines[0]).toMatchObject({ schedulerFile: file, waitMs: null });
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  }, 40_000);

  it("says every 10 s that it still waits for the scheduler its file names", async () => {
    const file = join(dir, "stale-every-10-s.json");
    writeFileSync(file, JSON.stringify({ type: "Scheduler", address: await refusingAddress() }));
    const { logger, records } = memoryLogger();
    const said = (start: string) => records.filter((r) => String(r.msg).startsWith(start));
    const stop = new AbortController();
    // Only the clock the wait reads is faked, and moved on by hand: its 10 s
    // pass in about 3 s of tries (once waited out in real time, in a child).
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      // As `weft worker --scheduler-file` waits, with no --death-timeout.
      const waiting = liveSchedulerFromFile(file, {
        connectTimeoutMs: 10_000,
        deathTimeoutMs: null,
        signal: stop.signal,
        logger,
      });
      // Stopped as a SIGTERM stops it (its end is the child test's above).
      const ended = expect(waiting).rejects.toThrow();
      await until(() => said("the scheduler the scheduler file names refuses").length > 0);
      vi.setSystemTime(Date.now() + 9_500);
      await sleep(1_700); // five more tries (50 ms apart, then twice as long each time)
      expect(said("still waiting")).toEqual([]);
      vi.setSystemTime(Date.now() + 1_000);
      await until(() => said("still waiting").length > 0);
      stop.abort();
      await ended;
    } finally {
      stop.abort();
      vi.useRealTimers();
    }
    expect(said("still waiting").map((r) => r.msg)).toEqual([
      expect.stringMatching(
        /^still waiting for a scheduler at the address the scheduler file names \(tcp:.* refuses connections, for 1\d s\)$/,
      ),
    ]);
    expect(said("still waiting")[0]).toMatchObject({ schedulerFile: file, waitMs: null });
  });
});

/**
 * Resolves once `done()` holds, polled every 20 ms; rejects after 5 s of real
 * time. Not testCluster's `eventually`: it reads Date, which the test fakes.
 */
async function until(done: () => boolean): Promise<void> {
  const deadline = performance.now() + 5_000;
  while (!done()) {
    if (performance.now() > deadline) throw new Error("timed out waiting for a log line");
    await sleep(20);
  }
}
