import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { CancelledError } from "../../client/errors.ts";
import { closeTestClusters, testCluster } from "../../client/testCluster.ts";
import { inc, slowInc } from "../../client/testTasks.ts";
import { Scheduler } from "../../scheduler/scheduler.ts";
import { cliWorker, runWeft, testContext } from "../testContext.ts";

afterEach(closeTestClusters);

describe("weft restart", () => {
  it("restarts the cluster and waits for its workers; --no-wait does not", async () => {
    const { cluster, client } = await testCluster();
    const f = client.submit(slowInc, 1, 60_000);
    const r = await runWeft(["restart", cluster.address]);
    expect(r).toEqual({ code: 0, out: "restarted; 2 workers running\n", err: "" });
    await expect(f.result()).rejects.toThrow(CancelledError);
    expect(await client.submit(inc, 1)).toBe(2);
    const quick = await runWeft(["restart", cluster.address, "--no-wait"]);
    expect(quick).toEqual({ code: 0, out: "restarted; the workers are starting again\n", err: "" });
    await client.waitForWorkers(2, { timeoutMs: 10_000 });
  });

  it("says one worker running in the singular", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    expect(await runWeft(["restart", cluster.address])).toEqual({
      code: 0,
      out: "restarted; 1 worker running\n",
      err: "",
    });
  });

  it("a weft worker without a nanny exits 0 saying so, and the restart times out (exit 1)", async () => {
    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      logger: pino({ level: "silent" }),
    });
    try {
      const ctx = testContext();
      const { done } = await cliWorker(scheduler.address, ctx);
      const r = await runWeft(["restart", scheduler.address, "--timeout", "200ms"]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(
        /^weft restart: waited 200 ms for 1 worker\(s\).*1 of them had no nanny/,
      );
      // The advice names the CLI's flags, not the API's options.
      expect(r.err).toContain("give a longer --timeout to wait longer, or --no-wait not to wait");
      expect(r.err).not.toMatch(/timeoutMs|waitForWorkers/);
      expect(r.err.trimEnd().split("\n")).toHaveLength(1);
      await done;
      expect(ctx.exitCode).toBe(0);
      expect(ctx.stderr.text).toContain(
        "weft worker: closed: the cluster restarted, and this worker has no nanny to start it again (run it with --nanny)",
      );
    } finally {
      await scheduler.close();
    }
  });

  it("exit 1, as its --help says, for a scheduler lost while it waits for the workers", async () => {
    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      logger: pino({ level: "silent" }),
    });
    try {
      const ctx = testContext();
      const { done } = await cliWorker(scheduler.address, ctx);
      const restarting = runWeft(["restart", scheduler.address, "--timeout", "60000"]);
      // The worker, without a nanny, leaves for good: the command waits for it.
      await done;
      await scheduler.close();
      const r = await restarting;
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/^weft restart: lost the scheduler: /);
    } finally {
      await scheduler.close();
    }
    const help = await runWeft(["restart", "--help"]);
    expect(help.out).toMatch(
      /1 if they are not\s+back within --timeout, the scheduler is lost meanwhile/,
    );
  });

  it("Ctrl-C while it waits for the workers says the restart was asked and goes on (exit 130)", async () => {
    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      logger: pino({ level: "silent" }),
    });
    const listeners = process.listenerCount("SIGINT");
    try {
      const ctx = testContext();
      const { done } = await cliWorker(scheduler.address, ctx);
      const restarting = runWeft(["restart", scheduler.address, "--timeout", "60000"]);
      // The worker, without a nanny, leaves for good: the command waits for it.
      await done;
      while (process.listenerCount("SIGINT") === listeners) {
        await new Promise((r) => setTimeout(r, 10));
      }
      process.emit("SIGINT", "SIGINT");
      const r = await restarting;
      expect(r).toEqual({
        code: 130,
        out: "",
        err: "weft restart: interrupted (SIGINT) after the restart was asked: the scheduler goes on with it, and the workers may still be coming back\n",
      });
      expect(process.listenerCount("SIGINT")).toBe(listeners);
    } finally {
      await scheduler.close();
    }
  });

  it("with workers named, restarts those only; exit 1 if one could not be", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    const [first, second] = cluster.workers;
    const f = client.submitWith({ workers: second.address }, inc, 1);
    expect(await f).toBe(2);
    const r = await runWeft(["restart", cluster.address, first.address]);
    expect(r).toEqual({ code: 0, out: `restarted ${first.address}\n`, err: "" });
    expect(first.restartRequested).toBe(true);
    expect(f.status).toBe("finished");
    const bad = await runWeft(["restart", cluster.address, "tcp://10.9.9.9:1"]);
    expect(bad).toEqual({
      code: 1,
      out: "not restarted tcp://10.9.9.9:1: no connected worker matches it\n",
      err: "",
    });
  });

  it("refuses bad usage (exit 2)", async () => {
    const bad = await runWeft(["restart", "tcp://127.0.0.1:1", "--timeout", "0"]);
    expect(bad).toMatchObject({
      code: 2,
      err: expect.stringContaining(
        "--timeout must be a positive whole number of milliseconds, or a duration such as 60s",
      ),
    });
    // Durations with a unit are taken (they were refused): it goes on to connect.
    const gone = await runWeft([
      "restart",
      "tcp://127.0.0.1:1",
      "--connect-timeout",
      "200ms",
      "--timeout",
      "1m",
    ]);
    expect(gone.code).toBe(2);
    expect(gone.err).toMatch(/^weft restart: .*tcp:\/\/127\.0\.0\.1:1/);
    expect(gone.err).not.toContain("--timeout");
    const help = await runWeft(["restart", "--help"]);
    expect(help.out).toContain("--no-wait");
  });
});
