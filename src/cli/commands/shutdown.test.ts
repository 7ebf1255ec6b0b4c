import { afterEach, describe, expect, it } from "vitest";
import { Client } from "../../client/client.ts";
import { ClientClosedError } from "../../client/errors.ts";
import { closeTestClusters, testCluster } from "../../client/testCluster.ts";
import { inc, slowInc } from "../../client/testTasks.ts";
import type { Scheduler } from "../../scheduler/scheduler.ts";
import { cliWorker, runWeft, testContext } from "../testContext.ts";
import { runScheduler } from "./schedulerAction.ts";

afterEach(closeTestClusters);

describe("shutdown: weft shutdown, client.shutdown()", () => {
  it("weft shutdown closes every worker (exit 0, not a fault) and then the scheduler (exit 0)", async () => {
    const schedulerCtx = testContext();
    let scheduler: Scheduler | null = null;
    const schedulerDone = runScheduler(
      { listen: "tcp://127.0.0.1:0", workerTtl: "30000", logLevel: "silent" },
      schedulerCtx,
      (s) => {
        scheduler = s;
        return s.closed; // as weft scheduler runs: until it closes (or a signal)
      },
    );
    while (scheduler === null) await new Promise((r) => setTimeout(r, 5));
    const address = (scheduler as Scheduler).address;
    const workers = [testContext(), testContext()];
    const started = await Promise.all(workers.map((ctx) => cliWorker(address, ctx)));
    const other = await Client.connect(address, { timeoutMs: 5_000 });
    try {
      const running = other.submit(slowInc, 1, 60_000);
      const r = await runWeft(["shutdown", address]);
      const addresses = started.map((s) => s.worker.address).sort();
      expect(r).toEqual({
        code: 0,
        out: `${addresses.map((a) => `closing ${a}\n`).join("")}shut down: the scheduler and 2 workers\n`,
        err: "",
      });
      await Promise.all(started.map((s) => s.done));
      for (const ctx of workers) {
        expect(ctx.exitCode).toBe(0);
        expect(ctx.stderr.text).toBe("");
      }
      for (const s of started) expect(s.worker.fault).toBeNull();
      await schedulerDone;
      expect(schedulerCtx.exitCode).toBe(0);
      expect((scheduler as Scheduler).status).toBe("closed");
      await expect(running.result()).rejects.toThrow();
    } finally {
      await other.close();
    }
  });

  it("client.shutdown() closes a LocalCluster's workers and scheduler, then the client", async () => {
    const { cluster, client } = await testCluster();
    expect(await client.submit(inc, 1)).toBe(2);
    const told = await client.shutdown();
    expect(told).toEqual(cluster.workers.map((w) => w.address).sort());
    await cluster.scheduler.closed;
    for (const w of cluster.workers) {
      await w.closed;
      expect(w.fault).toBeNull();
    }
    expect(() => client.submit(inc, 2)).toThrow(ClientClosedError);
    await cluster.close(); // still fine
  });

  it("counts one worker in the singular", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const r = await runWeft(["shutdown", cluster.address]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      `closing ${cluster.workers[0].address}\nshut down: the scheduler and 1 worker\n`,
    );
  });

  it("--help, and a scheduler that cannot be reached is exit 2", async () => {
    const help = await runWeft(["shutdown", "--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: weft shutdown /);
    const r = await runWeft(["shutdown", "tcp://127.0.0.1:1", "--connect-timeout", "1000"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^weft shutdown: /);
  });
});
