import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { refusingAddress, writeStuckSetupPreload } from "../cli/testContext.ts";
import type { NannyLink } from "./nannyLink.ts";
import { StartDeadline } from "./startDeadline.ts";
import { stuckStartLog } from "./stuckStartTasks.ts";
import { startingWorkers } from "./testStartingWorkers.ts";
import type { Worker } from "./worker.ts";

const { dir, worker, scheduler, warmImports } = startingWorkers("weft-worker-start-deadline-");

/** How `start()` ended: its error (or "started"), and after how long (ms). */
async function startOutcome(w: Worker): Promise<{ error: string; ms: number }> {
  const t0 = performance.now();
  const error = await w.start().then(
    () => "started",
    (err: unknown) => (err as Error).message,
  );
  return { error, ms: performance.now() - t0 };
}

const PREFIX =
  "the worker did not start within its death timeout (deathTimeoutMs, 400 ms): it was still";

// Short: without the bound these hang until the timeout.
describe("deathTimeoutMs bounds the whole start, as Dask's Server.start", {
  timeout: 15_000,
}, () => {
  // Each test bounds a step after the executor's: its cold import must not use up the deadline.
  beforeAll(() => warmImports());

  it("a preload whose weftSetup never resolves: start() rejects at the deadline, saying so, the preload torn down", async () => {
    const mod = join(dir, "stuck.mjs");
    const marks = join(dir, "stuck-marks.txt");
    writeStuckSetupPreload(mod, marks);
    // Warm: else the deadline may come during its import, with no weftSetup begun to tear down.
    await warmImports(pathToFileURL(mod).href);
    const s = await scheduler();
    const w = worker(s.address, { preload: [mod], deathTimeoutMs: 400 });
    const { error, ms } = await startOutcome(w);
    expect(error).toBe(
      `${PREFIX} running its preload modules' weftSetup (${pathToFileURL(mod).href}); it closed`,
    );
    expect(ms).toBeGreaterThanOrEqual(390);
    expect(ms).toBeLessThan(5_000);
    await w.closed;
    expect(readFileSync(marks, "utf8")).toBe("up\ndown\n");
    expect(w.status).toBe("failed");
    expect(s.state.workers.size).toBe(0);
  });

  it("a worker plugin of the register reply whose setup outlasts it: named, torn down once its setup is over", async () => {
    const s = await scheduler();
    s.workerPlugins.push({ name: "stuck", fn: "slowSetupPlugin", args: ["deadline", 1_500] });
    stuckStartLog().length = 0;
    const w = worker(s.address, { deathTimeoutMs: 400 });
    const { error, ms } = await startOutcome(w);
    expect(error).toBe(`${PREFIX} setting up the cluster's worker plugin "stuck"; it closed`);
    expect(ms).toBeLessThan(5_000);
    // The close waits on the plugin still in its setup (up to its timeout), then tears it down.
    await w.closed;
    expect(stuckStartLog()).toEqual(["deadline setup", "deadline teardown"]);
    expect(w.status).toBe("failed");
  });

  it("a nanny that never answers for a nanny plugin of the register reply: named", async () => {
    const s = await scheduler();
    s.nannyPlugins.push({ name: "env", fn: "nannyEnv", args: [] });
    const silentNanny: NannyLink = {
      addPlugin: () => new Promise(() => {}),
      removePlugin: () => Promise.resolve(false),
    };
    const w = worker(s.address, { nanny: true, nannyLink: silentNanny, deathTimeoutMs: 400 });
    const { error } = await startOutcome(w);
    expect(error).toBe(
      `${PREFIX} handing the cluster's nanny plugin "env" to its nanny; it closed`,
    );
    await w.closed;
    expect(w.status).toBe("failed");
  });

  it("a scheduler that refuses connections: the wait's own error, at the same deadline", async () => {
    const w = worker(await refusingAddress(), { listen: "tcp://127.0.0.1:0", deathTimeoutMs: 400 });
    const { error, ms } = await startOutcome(w);
    expect(error).toMatch(/ refused .*: still refused after 400 ms$/);
    expect(ms).toBeLessThan(5_000);
    await w.closed;
    expect(w.status).toBe("failed");
  });

  it("null: no bound (a close still ends the start)", async () => {
    const mod = join(dir, "stuck-null.mjs");
    writeFileSync(mod, "export function weftSetup() { return new Promise(() => {}); }\n");
    const s = await scheduler();
    const w = worker(s.address, { preload: [mod], deathTimeoutMs: null });
    const outcome = startOutcome(w);
    const early = await Promise.race([
      outcome.then(() => "ended"),
      new Promise((r) => setTimeout(() => r("pending"), 1_000)),
    ]);
    expect(early).toBe("pending");
    await w.close(0);
    expect((await outcome).error).toBe("the worker was closed while starting");
  });
});

describe("without deathTimeoutMs", { timeout: 15_000 }, () => {
  it("a weftSetup slower than connectTimeoutMs is waited for (only the scheduler wait has the default bound, as before)", async () => {
    const mod = join(dir, "slow.mjs");
    writeFileSync(
      mod,
      "export function weftSetup() { return new Promise((r) => setTimeout(r, 800)); }\n",
    );
    const s = await scheduler();
    const w = worker(s.address, { preload: [mod], connectTimeoutMs: 300 });
    const { error, ms } = await startOutcome(w);
    expect(error).toBe("started");
    expect(ms).toBeGreaterThanOrEqual(790);
  });

  it("the scheduler wait still ends connectTimeoutMs after its first try", async () => {
    const w = worker(await refusingAddress(), {
      listen: "tcp://127.0.0.1:0",
      connectTimeoutMs: 400,
    });
    const { error, ms } = await startOutcome(w);
    expect(error).toMatch(/ refused .*: still refused after 400 ms$/);
    expect(ms).toBeLessThan(5_000);
  });
});

describe("StartDeadline", () => {
  const waitMs = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it("leaves a registration be past it: one that succeeds late times the start out then, one that fails keeps its error", async () => {
    const expired: string[] = [];
    const late = new StartDeadline(
      50,
      () => expired.push("late"),
      () => "registering",
    );
    await late.exemptWhile(() => waitMs(150).then(() => "registered"));
    expect(expired).toEqual(["late"]);
    expect(late.timedOut).toBe(
      "the worker did not start within its death timeout (deathTimeoutMs, 50 ms): it was still registering; it closed",
    );
    const failing = new StartDeadline(50, () => expired.push("failing"));
    await expect(
      failing.exemptWhile(() => waitMs(150).then(() => Promise.reject(new Error("refused")))),
    ).rejects.toThrow("refused");
    await waitMs(20);
    expect(expired).toEqual(["late"]);
    expect(failing.timedOut).toBeNull();
    failing.clear();
  });

  it("clear() calls it off; null is no deadline", async () => {
    const expired: string[] = [];
    const cleared = new StartDeadline(30, () => expired.push("cleared"));
    cleared.clear();
    const none = new StartDeadline(null, () => expired.push("none"));
    await waitMs(100);
    expect(expired).toEqual([]);
    expect(none.timedOut).toBeNull();
  });
});
