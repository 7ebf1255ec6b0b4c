import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { freePort } from "../cli/commands/contactAddress.ts";
import { answerUnresolvedAtOnce } from "../comm/testUnresolvedHost.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { importModule } from "../util/importModule.ts";
import { memoryLogger, TEST_TASKS, testWorker } from "./testWorker.ts";

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
        `refused to register this worker: the name "a" is taken by the worker at ${holder.address} \\(asked [2-9] times in 1[2-9]\\d\\d ms\\)$`,
      ),
    );
    const asking = records.filter((r) => String(r.msg).includes("asking again"));
    expect(asking).toHaveLength(1);
    expect(asking[0]).toMatchObject({ level: 30, waitMs: 1_200 });
  });

  it("a worker whose name is taken asks no longer than its deathTimeoutMs, which bounds the whole start", async () => {
    const scheduler = await Scheduler.start({ listen: "inproc://registration-names-death" });
    open.push(scheduler);
    const holder = await testWorker(scheduler.address, { name: "a" });
    open.push(holder);
    const started = Date.now();
    await expect(
      testWorker(scheduler.address, { name: "a", connectTimeoutMs: 60_000, deathTimeoutMs: 1_500 }),
    ).rejects.toThrow(/the name "a" is taken by the worker at .* \(asked \d+ times in \d+ ms\)$/);
    // Not the 60 s of connectTimeoutMs (a loaded host may stretch 1.5 s a little).
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("with deathTimeoutMs null, waits past connectTimeoutMs for a scheduler not there yet, saying so every 10 s", async () => {
    // Only the clock the wait reads is faked, and moved on by hand: its 10 s
    // pass in about 3 s of tries (once waited out in real time, 11.5 s).
    vi.useFakeTimers({ toFake: ["Date"] });
    const { logger, records } = memoryLogger();
    const said = (start: string) => records.filter((r) => String(r.msg).startsWith(start));
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    let starting: ReturnType<typeof testWorker> | undefined;
    try {
      starting = testWorker(address, { connectTimeoutMs: 200, deathTimeoutMs: null, logger });
      await until(() => said("the scheduler refuses connections").length > 0, records);
      vi.setSystemTime(Date.now() + 9_500);
      await sleep(1_700); // five more tries (50 ms apart, then twice as long each time)
      expect(said("still waiting for the scheduler")).toEqual([]);
      vi.setSystemTime(Date.now() + 1_000);
      await until(() => said("still waiting for the scheduler").length > 0, records);
    } finally {
      vi.useRealTimers();
    }
    const scheduler = await Scheduler.start({ listen: address });
    open.push(scheduler);
    const worker = await starting;
    open.push(worker);
    expect(worker.status).toBe("running");
    const first = said("the scheduler refuses connections");
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ level: 30, scheduler: address, waitMs: null });
    const still = said("still waiting for the scheduler");
    expect(still.map((r) => r.msg)).toEqual([
      expect.stringMatching(
        /^still waiting for the scheduler at tcp:.*, which refuses connections \(for 1\d s\)$/,
      ),
    ]);
    expect(still[0]).toMatchObject({ level: 30, scheduler: address });
    expect(still[0].waitedMs).toBeGreaterThanOrEqual(10_000);
  }, 30_000);

  it("waits for a scheduler whose host name does not resolve yet, saying why, and gives up at deathTimeoutMs naming it", async ({
    onTestFinished,
  }) => {
    // The resolver's own error, but at once: its timing (over 400 ms on a loaded host) is
    // not what is tested.
    onTestFinished(await answerUnresolvedAtOnce("no-such-host.invalid"));
    // Warm: run first (or alone), the executor's cold import could use up the deadline.
    await importModule(TEST_TASKS);
    const { logger, records } = memoryLogger();
    const started = Date.now();
    await expect(
      testWorker("tcp://no-such-host.invalid:8786", { deathTimeoutMs: 400, logger }),
    ).rejects.toThrow(
      /getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid.*: still failing after 400 ms$/,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    const first = records.filter((r) =>
      String(r.msg).startsWith("the scheduler cannot be reached"),
    );
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({
      level: 30,
      scheduler: "tcp://no-such-host.invalid:8786",
      reason: expect.stringMatching(/^getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid$/),
      waitMs: 400,
    });
  });

  it("gives up at deathTimeoutMs, each try within connectTimeoutMs", async () => {
    const started = Date.now();
    await expect(
      testWorker("inproc://registration-never", { connectTimeoutMs: 5_000, deathTimeoutMs: 300 }),
    ).rejects.toThrow(/: still refused after 300 ms$/);
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

/**
 * Resolves once `done()` holds, polled every 20 ms; rejects after 15 s of real
 * time (5 s once timed out on a loaded host), with the last lines logged, which
 * say what the worker did instead. Not testCluster's `eventually`: it reads
 * Date, which the test fakes.
 */
async function until(done: () => boolean, records: readonly { msg?: unknown }[]): Promise<void> {
  const deadline = performance.now() + 15_000;
  while (!done()) {
    if (performance.now() > deadline) {
      const last = records.slice(-5).map((r) => String(r.msg));
      throw new Error(`timed out waiting for a log line; the last logged: ${JSON.stringify(last)}`);
    }
    await sleep(20);
  }
}

describe("a worker's registration lets the worker go", () => {
  it("a worker closed soon after it registered can be collected at once: the wait for the scheduler's answer does not hold it until deathTimeoutMs", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const scheduler = await Scheduler.start({ listen: "inproc://registration-collected" });
    open.push(scheduler);
    // Before, the answer's timeout (deathTimeoutMs, 30 s by default) went on after the
    // answer came, holding the worker, its state and its logs: a cluster scaling workers
    // up and down kept every worker closed within that time.
    const collected = await (async () => {
      const worker = await testWorker(scheduler.address, { deathTimeoutMs: 60_000 });
      await worker.close();
      return new WeakRef(worker);
    })();
    for (let i = 0; i < 20 && collected.deref() !== undefined; i++) {
      await sleep(10);
      gc();
    }
    expect(collected.deref()).toBeUndefined();
  });
});
