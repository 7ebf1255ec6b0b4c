import { afterEach, describe, expect, it } from "vitest";
import { Scheduler } from "../scheduler/scheduler.ts";
import { memoryLogger, testWorker } from "./testWorker.ts";

const open: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

describe("registering with the scheduler", () => {
  it("a worker whose name is taken says once that it asks again, and at the end for how long it did", async () => {
    const scheduler = await Scheduler.start({ listen: "inproc://registration-names" });
    open.push(scheduler);
    const holder = await testWorker(scheduler.address, { name: "a" });
    open.push(holder);
    const { logger, records } = memoryLogger();
    await expect(
      testWorker(scheduler.address, { name: "a", connectTimeoutMs: 1_200, logger }),
    ).rejects.toThrow(
      new RegExp(
        `refused to register this worker: the name "a" is taken by the worker at ${holder.address} \\(asked [2-9] times in 1200 ms\\)$`,
      ),
    );
    const asking = records.filter((r) => String(r.msg).includes("asking again"));
    expect(asking).toHaveLength(1);
    expect(asking[0]).toMatchObject({ level: 30, waitMs: 1_200 });
  });
});
