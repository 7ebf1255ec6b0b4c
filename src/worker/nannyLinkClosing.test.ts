import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { Scheduler } from "../scheduler/scheduler.ts";
import type { NannyLink } from "./nannyLink.ts";
import { TEST_TASKS } from "./testWorker.ts";
import { Worker } from "./worker.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function worker(scheduler: string, nannyLink: NannyLink): Worker {
  const w = new Worker({
    scheduler,
    listen: "inproc://",
    nthreads: 1,
    executor: "inline",
    taskModules: [TEST_TASKS],
    logger: pino({ level: "silent" }),
    nanny: true,
    nannyLink,
  });
  cleanups.push(() => w.close(0));
  return w;
}

const plugins = {
  addPlugin: () => Promise.resolve({ restart: false }),
  removePlugin: () => Promise.resolve(false),
};

describe("the nannyLink's closing notice", { timeout: 15_000 }, () => {
  it("a link whose closing throws does not keep the worker from closing", async () => {
    const s = await Scheduler.start({ logger: pino({ level: "silent" }), listen: "inproc://" });
    cleanups.push(() => s.close());
    const told: string[] = [];
    const w = worker(s.address, {
      ...plugins,
      closing(how) {
        told.push(`restart ${how.restart} fault ${how.fault}`);
        throw new Error("the link is broken");
      },
    });
    await w.start();
    // Before, the close rejected at its first step: nothing closed, `closed` never resolved.
    const closed = await Promise.race([
      w.close().then(() => "closed"),
      new Promise((r) => setTimeout(() => r("still closing"), 5_000)),
    ]);
    expect(closed).toBe("closed");
    expect(w.status).toBe("closed");
    expect(told).toEqual(["restart false fault false"]);
  });

  it("a closing that is not a function is refused at construction, naming it", () => {
    const link = { ...plugins, closing: 1 } as unknown as NannyLink;
    expect(() => worker("inproc://nowhere", link)).toThrow(
      "Worker option nannyLink's closing must be a function when given, got 1",
    );
  });
});
