/**
 * A `weft worker` (no nanny) stopped by SIGINT or SIGTERM just as it closes on a fault of
 * its own (its scheduler gone at the same moment, as at the end of a batch job): its exit
 * is its stopped one, 0, as a nanny's is (nannyStopRace.test.ts).
 */

import { pino } from "pino";
import { expect, it } from "vitest";
import { Scheduler } from "../../scheduler/scheduler.ts";
import type { Worker } from "../../worker/worker.ts";
import { TEST_WORKER_ARGS, testContext } from "../testContext.ts";
import { runWorker } from "./workerAction.ts";

/**
 * Run a `weft worker` whose scheduler cuts its connection (the worker closes on that
 * fault, its close held by a plugin's teardown), then `stoppedBy` as its stop: what
 * the command's SIGTERM or SIGINT gives, or null for none. Returns the command's context.
 */
async function faultThenStop(stoppedBy: string | null) {
  const scheduler = await Scheduler.start({
    listen: "tcp://127.0.0.1:0",
    logger: pino({ level: "silent" }),
  });
  const ctx = testContext();
  try {
    await runWorker(scheduler.address, TEST_WORKER_ARGS, ctx, async (w: Worker) => {
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      await w.addPlugin({ teardown: () => held }, "held");
      // The scheduler goes away for this worker: it closes on that fault.
      scheduler.router.workers.get(w.address)?.comm.abort();
      while (w.status !== "closing") await new Promise((r) => setTimeout(r, 5));
      expect(w.fault).toBe("lost the connection to the scheduler");
      // The stop comes while it closes; then its close goes on to its end.
      setTimeout(release, 50);
      if (stoppedBy === null) await w.closed;
      return stoppedBy;
    });
  } finally {
    await scheduler.close();
  }
  return ctx;
}

it("stopped by SIGTERM while it closes on a fault, it exits 0, saying both", async () => {
  const ctx = await faultThenStop("SIGTERM");
  // Before, it exited 1: 0 or 1 as the signal or the fault came first.
  expect(ctx.exitCode).toBe(0);
  expect(ctx.stderr.text).toBe(
    "weft worker: stopped by SIGTERM while closing on a fault: lost the connection to the scheduler\n",
  );
});

it("not stopped, the same fault is exit 1", async () => {
  const ctx = await faultThenStop(null);
  expect(ctx.exitCode).toBe(1);
  expect(ctx.stderr.text).toBe("weft worker: stopped: lost the connection to the scheduler\n");
});
