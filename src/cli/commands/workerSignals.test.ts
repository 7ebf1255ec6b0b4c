import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { afterAll, describe, expect, it, vi } from "vitest";
import { Scheduler } from "../../scheduler/scheduler.ts";
import {
  refusingAddress,
  TEST_WORKER_ARGS,
  testContext,
  writeStuckSetupPreload,
} from "../testContext.ts";
import { main } from "../weft.ts";
import { runWorker } from "./workerAction.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-worker-signals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ARGS = ["--executor", "inline", "--nthreads", "1", "--log-level", "silent"];

/**
 * Run `weft worker ...args`, send `signal` once it has waited a while, and
 * check that it closed at once with exit 0, saying nothing, its handlers gone.
 */
async function signalledWhileWaiting(args: string[], signal: NodeJS.Signals): Promise<void> {
  const ctx = testContext();
  const worker = main(["node", "weft", "worker", ...args, ...ARGS], ctx);
  await sleep(1_000); // started, and waiting
  const signalled = Date.now();
  process.emit(signal, signal);
  const code = await Promise.race([worker, sleep(5_000, "still waiting")]);
  expect(code).toBe(0);
  expect(Date.now() - signalled).toBeLessThan(3_000);
  expect(ctx.stderr.text).toBe("");
  expect(process.listenerCount("SIGTERM")).toBe(0);
  expect(process.listenerCount("SIGINT")).toBe(0);
}

describe("weft worker and signals", () => {
  it("SIGTERM while it waits for its scheduler closes it as when running: exit 0, nothing said", async () => {
    await signalledWhileWaiting([await refusingAddress(), "--connect-timeout", "20000"], "SIGTERM");
  }, 30_000);

  it("SIGTERM while it waits for its scheduler file to appear: exit 0, nothing said", async () => {
    await signalledWhileWaiting(["--scheduler-file", join(dir, "never.json")], "SIGTERM");
  }, 30_000);

  it("SIGINT while the scheduler its file names refuses connections: exit 0, nothing said", async () => {
    const file = join(dir, "stale.json");
    writeFileSync(file, JSON.stringify({ type: "Scheduler", address: await refusingAddress() }));
    await signalledWhileWaiting(["--scheduler-file", file], "SIGINT");
  }, 30_000);

  it("SIGTERM while a preload's weftSetup never resolves: exit 0 at once, the preload torn down", async () => {
    const log = join(dir, "preload.log");
    const preload = join(dir, "stuck.mjs");
    writeStuckSetupPreload(preload, log);
    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      logger: pino({ level: "silent" }),
    });
    try {
      // Before, the start waited on the weftSetup for good: the signal closed nothing.
      await signalledWhileWaiting([scheduler.address, "--preload", preload], "SIGTERM");
      expect(readFileSync(log, "utf8")).toBe("up\ndown\n");
    } finally {
      await scheduler.close();
    }
  }, 30_000);

  it("a signal that stops a running worker is logged before it closes", async () => {
    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      logger: pino({ level: "silent" }),
    });
    try {
      const ctx = testContext();
      const said: unknown[][] = [];
      await runWorker(scheduler.address, TEST_WORKER_ARGS, ctx, (w) => {
        vi.spyOn(w.logger, "info").mockImplementation((...args: unknown[]) => {
          said.push(args);
        });
        return Promise.resolve("SIGINT");
      });
      expect(ctx.exitCode).toBe(0);
      // Before, its log said only "worker closed": stopped or retired alike.
      expect(said[0]).toEqual([{ signal: "SIGINT" }, "received SIGINT; closing"]);
    } finally {
      await scheduler.close();
    }
  }, 30_000);
});
