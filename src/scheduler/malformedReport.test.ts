import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { memoryLogger } from "../worker/testWorker.ts";
import { Scheduler } from "./scheduler.ts";
import { INC_X_GRAPH, type RawPeer, rawPeer, registerClient, registerWorker } from "./testPeer.ts";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

/** A scheduler, a raw worker given task x = inc(1) (with `retries`) and the raw client wanting it. */
async function taskOnRawWorker(retries = 0) {
  const { logger, records } = memoryLogger();
  const s = await Scheduler.start({ listen: "inproc://malformed", validate: true, logger });
  open.push(s);
  const track = (c: { close(): Promise<void> }) => open.push(c);
  const w = await rawPeer(s.address, registerWorker("inproc://w/1"), track);
  const c = await rawPeer(s.address, registerClient("c1"), track);
  const x = { spec: { fn: "inc", args: [1] }, dependencies: [], retries };
  await c.comm.send([{ ...INC_X_GRAPH, tasks: new Map([["x", x]]) }]);
  const compute = await w.waitFor((m) => m.op === "compute-task");
  return { s, w, c, runId: compute.runId as number, records };
}

/** The first message `p` received that `pred` accepts, or a failure after 2 s. */
function within(
  p: RawPeer,
  pred: (m: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  return Promise.race([
    p.waitFor(pred),
    sleep(2_000).then(() => {
      throw new Error("nothing in 2 s: the client would wait forever");
    }),
  ]);
}

/** The client's first `task-erred`. */
const erredWithin = (c: RawPeer) => within(c, (m) => m.op === "task-erred");

const FINISHED = { op: "task-finished", key: "x", typename: "number", stimulusId: "f" };

describe("a worker's malformed report of a task", () => {
  it("errs the task of a malformed task-finished, saying what was wrong, and frees the worker's copy", async () => {
    const { s, w, c, runId } = await taskOnRawWorker();
    await w.comm.send([{ ...FINISHED, runId, nbytes: -1 }]);
    const erred = await erredWithin(c);
    expect(erred.key).toBe("x");
    expect(erred.exceptionText).toBe(
      "the scheduler refused the report of the task by the worker at inproc://w/1 as malformed: invalid worker-message task-finished: nbytes must be an integer from 0 to 2^53 - 1 or null, got -1",
    );
    expect(s.state.tasks.get("x")?.state).toBe("erred");
    expect(s.counters.rejectedMessages).toBe(1);
    // Its copy, in memory there, is freed when the client lets the erred key go.
    await c.comm.send([
      { op: "client-releases-keys", clientId: "c1", keys: ["x"], stimulusId: "rel" },
    ]);
    await w.waitFor((m) => m.op === "free-keys" && (m.keys as string[]).includes("x"));
    s.state.validateState();
  });

  it("errs the task of a malformed task-erred, and one whose run id is malformed", async () => {
    for (const report of [
      { op: "task-erred", key: "x", exceptionText: 5, tracebackText: "", stimulusId: "e" },
      { ...FINISHED, nbytes: 8, runIdIsBad: true },
    ]) {
      const { s, w, c, runId } = await taskOnRawWorker();
      const { runIdIsBad, ...msg } = report as Record<string, unknown>;
      await w.comm.send([{ ...msg, runId: runIdIsBad === true ? "1" : runId }]);
      const erred = await erredWithin(c);
      expect(erred.exceptionText).toMatch(
        /^the scheduler refused the report of the task by the worker at inproc:\/\/w\/1 as malformed: invalid worker-message task-(erred: exceptionText must be a string|finished: runId must be an integer)$/,
      );
      s.state.validateState();
      await s.close();
    }
  });

  it("runs the task again while its retries last", async () => {
    const { s, w, c, runId } = await taskOnRawWorker(1);
    await w.comm.send([{ ...FINISHED, runId, nbytes: Number.NaN }]);
    const again = await within(w, (m) => m.op === "compute-task" && m.runId !== runId);
    await w.comm.send([{ ...FINISHED, runId: again.runId, nbytes: 8 }]);
    await c.waitFor((m) => m.op === "key-in-memory");
    expect(c.received.some((m) => m.op === "task-erred")).toBe(false);
    s.state.validateState();
  });

  it("only logs a malformed report of another run, or of a task not processing there", async () => {
    const { s, w, c, runId, records } = await taskOnRawWorker();
    await w.comm.send([
      { ...FINISHED, runId: runId + 7, nbytes: -1 },
      { ...FINISHED, key: "nope", runId, nbytes: -1 },
    ]);
    await w.comm.send([{ ...FINISHED, runId, nbytes: 8 }]);
    await c.waitFor((m) => m.op === "key-in-memory");
    expect(c.received.some((m) => m.op === "task-erred")).toBe(false);
    expect(records.filter((r) => r.msg === "rejected a malformed message")).toHaveLength(2);
    s.state.validateState();
  });
});
