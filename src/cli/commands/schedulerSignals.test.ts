import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it, vi } from "vitest";
import { testContext, writeStuckSetupPreload } from "../testContext.ts";
import { main } from "../weft.ts";
import { runScheduler } from "./schedulerAction.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-scheduler-signals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("weft scheduler and signals", () => {
  it("SIGTERM while a preload's weftSetup never resolves: exit 0 at once, nothing said, the preload torn down", async () => {
    const log = join(dir, "preload.log");
    const preload = join(dir, "stuck.mjs");
    writeStuckSetupPreload(preload, log);
    const ctx = testContext();
    const args = ["--listen", "tcp://127.0.0.1:0", "--preload", preload, "--log-level", "silent"];
    const scheduler = main(["node", "weft", "scheduler", ...args], ctx);
    for (let i = 0; i < 200 && !existsSync(log); i++) await sleep(50);
    const signalled = Date.now();
    // Before, no handler was there while it started: the signal went unheard (here) or
    // killed the process with the preload never torn down.
    process.emit("SIGTERM", "SIGTERM");
    const code = await Promise.race([scheduler, sleep(5_000, "still starting")]);
    expect(code).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(3_000);
    expect(ctx.stdout.text).toBe("");
    expect(ctx.stderr.text).toBe("");
    expect(readFileSync(log, "utf8")).toBe("up\ndown\n");
    expect(process.listenerCount("SIGTERM")).toBe(0);
    expect(process.listenerCount("SIGINT")).toBe(0);
  }, 30_000);

  it("a signal that stops a running scheduler is logged before it closes", async () => {
    const ctx = testContext();
    const said: unknown[][] = [];
    await runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent" },
      ctx,
      (s) => {
        vi.spyOn(s.logger, "info").mockImplementation((...args: unknown[]) => {
          said.push(args);
        });
        return Promise.resolve("SIGTERM");
      },
    );
    expect(ctx.exitCode).toBe(0);
    // Before, its log said only "scheduler closed": stopped, failed or idle alike.
    expect(said[0]).toEqual([{ signal: "SIGTERM" }, "received SIGTERM; closing"]);
  }, 30_000);
});
