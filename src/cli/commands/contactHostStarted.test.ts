import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { expect, it, vi } from "vitest";
import { Scheduler } from "../../scheduler/scheduler.ts";
import { Worker } from "../../worker/worker.ts";
import { TEST_WORKER_ARGS, testContext } from "../testContext.ts";
import { freePort } from "./contactAddress.ts";
import { logStopSignal } from "./serveUntil.ts";
import { runWorker } from "./workerAction.ts";

// A resolver that never answers (a DNS server gone silent): the lookup runs beside the
// start, bounded to 2 s, and may still run once the worker is registered.
vi.mock("./childLookup.ts", () => ({
  lookupInChild: () => new Promise(() => {}),
}));

vi.mock("./serveUntil.ts", async (original) => ({
  ...(await original<typeof import("./serveUntil.ts")>()),
  logStopSignal: vi.fn(),
}));

it("a worker stopped once started, its --contact-address lookup still running, logs the signal as any running worker", async () => {
  const scheduler = await Scheduler.start({
    listen: "tcp://127.0.0.1:0",
    logger: pino({ level: "silent" }),
  });
  try {
    let started = false;
    const start = Worker.prototype.start;
    vi.spyOn(Worker.prototype, "start").mockImplementation(async function (this: Worker) {
      const worker = await start.call(this);
      started = true;
      return worker;
    });
    const port = await freePort("127.0.0.1");
    const ctx = testContext();
    let signal!: (name: string) => void;
    const giveUp = new Promise<string>((resolve) => {
      signal = resolve;
    });
    const run = runWorker(
      scheduler.address,
      {
        ...TEST_WORKER_ARGS,
        listen: `tcp://127.0.0.1:${port}`,
        contactAddress: `tcp://localhost:${port}`,
      },
      ctx,
      () => giveUp,
      giveUp,
    );
    // Started (its start() resolved), its lookup still waiting (up to 2 s).
    while (!started) await sleep(5);
    signal("SIGTERM");
    await run;
    expect(ctx.exitCode).toBe(0);
    // Before, nothing: the stop went the way of one while starting, unsaid.
    expect(logStopSignal).toHaveBeenCalledWith(expect.anything(), "SIGTERM");
  } finally {
    await scheduler.close();
  }
}, 30_000);
