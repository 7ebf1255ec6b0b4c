import { afterEach, describe, expect, it, vi } from "vitest";
import { memoryLogger } from "../worker/testWorker.ts";
import { replyTo } from "./clientRequests.ts";
import { Scheduler } from "./scheduler.ts";
import { startTestScheduler } from "./testPeer.ts";

const open: Scheduler[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

/** A scheduler listening in-process, whose requests are answered here directly, without a client. */
function start(): Promise<Scheduler> {
  return startTestScheduler("inproc://requests", (s) => open.push(s));
}

describe("the requests a client makes of the scheduler server", () => {
  it("refuses a __proto__ topic, which as a key of get-events' answer would set its prototype", async () => {
    const s = await start();
    const refused = replyTo(s, "c", {
      op: "log-event",
      requestId: 1,
      topics: ["__proto__"],
      msg: 1,
    });
    expect(refused).toEqual({
      op: "reply",
      requestId: 1,
      error: "log-event: topics must be a non-empty array of non-empty strings",
    });
    expect(replyTo(s, "c", { op: "get-events", requestId: 2 })).toEqual({
      op: "reply",
      requestId: 2,
      result: {},
    });
    expect(s.countersSnapshot.rejectedMessages).toBe(1);
  });

  it("refuses a log-event without topics, which would log nothing", async () => {
    const s = await start();
    expect(replyTo(s, "c", { op: "log-event", requestId: 1, topics: [], msg: 1 })).toMatchObject({
      error: "log-event: topics must be a non-empty array of non-empty strings",
    });
  });

  it("refuses an nbytes summary that is not a boolean", async () => {
    const s = await start();
    expect(replyTo(s, "c", { op: "nbytes", requestId: 1, summary: "yes" })).toEqual({
      op: "reply",
      requestId: 1,
      error: "nbytes: summary must be a boolean",
    });
  });

  it("answers a task-stream request of count 0 with no runs, and refuses a negative count", async () => {
    const s = await start();
    expect(replyTo(s, "c", { op: "task-stream", requestId: 1, count: 0 })).toEqual({
      op: "reply",
      requestId: 1,
      result: [],
    });
    expect(replyTo(s, "c", { op: "task-stream", requestId: 2, count: -1 })).toMatchObject({
      error: "task-stream: count must be an integer ≥ 0",
    });
  });

  it("lets go of the coordination primitives as it closes: a lease held is not held any more", async () => {
    const s = await start();
    const acquire = { op: "semaphore-acquire", requestId: 1, name: "S", maxLeases: 1, lease: "l" };
    expect(replyTo(s, "c", acquire)).toEqual({ op: "reply", requestId: 1, result: true });
    await s.close();
    expect(s.coordination.semaphores.leases("S")).toBe(0);
  });

  it("drops a request whose requestId is not an integer, which no reply could be matched to", async () => {
    const s = await start();
    expect(replyTo(s, "c", { op: "counters", requestId: 1.5 })).toBeNull();
    expect(s.countersSnapshot.rejectedMessages).toBe(1);
  });

  it("logs a failed dump-state as such, not as a request of the scheduler's code", async () => {
    const { logger, records } = memoryLogger();
    const s = await Scheduler.start({ listen: "inproc://requests", validate: true, logger });
    open.push(s);
    s.state.log.toArray = () => {
      throw new Error("no log to read");
    };
    expect(replyTo(s, "c", { op: "dump-state", requestId: 1 })).toBeNull();
    await vi.waitFor(() => expect(records.some((r) => r.reason === "no log to read")).toBe(true));
    const failed = records.find((r) => r.reason === "no log to read");
    expect(failed).toMatchObject({ op: "dump-state", msg: "a client's dump-state request failed" });
  });
});
