import { describe, expect, it } from "vitest";
import { type AsyncInstructionContext, BaseWorker, type MetricName } from "./baseWorker.ts";
import {
  ComputeTaskEvent,
  ExecuteSuccessEvent,
  FreeKeysEvent,
  GatherDepBusyEvent,
  GatherDepSuccessEvent,
  RetryBusyWorkerEvent,
  type StateMachineEvent,
} from "./state/events.ts";
import { WorkerState } from "./state/workerState.ts";

/** A BaseWorker whose I/O is scripted by the test. */
class MockWorker extends BaseWorker {
  sent: Record<string, unknown>[] = [];
  metrics: [MetricName, number][] = [];
  executions: string[] = [];
  gathers: string[] = [];
  blockExecute = false;
  /** Return the event itself rather than a promise, as the inline executor's synchronous tasks do. */
  syncExecute = false;
  busyOnce = true;

  batchedSend(msg: Record<string, unknown>): void {
    this.sent.push(msg);
  }

  async gatherDep(
    worker: string,
    toGather: ReadonlySet<string>,
    totalNbytes: number,
    stimulusId: string,
  ): Promise<StateMachineEvent> {
    this.gathers.push(`${worker}:${[...toGather].join(",")}`);
    await Promise.resolve();
    if (this.busyOnce) {
      this.busyOnce = false;
      return new GatherDepBusyEvent({ worker, totalNbytes, stimulusId: `busy-${stimulusId}` });
    }
    const data = Object.fromEntries([...toGather].map((k) => [k, 1]));
    return new GatherDepSuccessEvent({
      worker,
      totalNbytes,
      data,
      stimulusId: `got-${stimulusId}`,
    });
  }

  execute(
    key: string,
    stimulusId: string,
    ctx: AsyncInstructionContext,
  ): StateMachineEvent | Promise<StateMachineEvent> {
    if (this.syncExecute) {
      this.executions.push(key);
      return ExecuteSuccessEvent.dummy(key, { value: 1, runId: 7, stimulusId: `done-${key}` });
    }
    return this.executeAsync(key, stimulusId, ctx);
  }

  async executeAsync(
    key: string,
    _stimulusId: string,
    ctx: AsyncInstructionContext,
  ): Promise<StateMachineEvent> {
    this.executions.push(key);
    if (this.blockExecute) {
      await new Promise((_resolve, reject) => {
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
      });
    }
    ctx.ledger.record("thread-cpu", 0.001);
    return ExecuteSuccessEvent.dummy(key, { value: 42, runId: 7, stimulusId: `done-${key}` });
  }

  async retryBusyWorkerLater(worker: string): Promise<StateMachineEvent> {
    await Promise.resolve();
    return new RetryBusyWorkerEvent({ worker, stimulusId: `retry-${worker}` });
  }

  digestMetric(name: MetricName, value: number): void {
    this.metrics.push([name, value]);
  }
}

/** A MockWorker whose peers send none of the keys asked for. */
class NothingFetchedWorker extends MockWorker {
  override async gatherDep(
    worker: string,
    _toGather: ReadonlySet<string>,
    totalNbytes: number,
    stimulusId: string,
  ): Promise<StateMachineEvent> {
    await Promise.resolve();
    return new GatherDepSuccessEvent({
      worker,
      totalNbytes,
      data: {},
      stimulusId: `got-${stimulusId}`,
    });
  }
}

/** A MockWorker whose task runs end when the test calls `finish`. */
class GatedWorker extends MockWorker {
  finish: () => void = () => {};

  override async executeAsync(key: string): Promise<StateMachineEvent> {
    await new Promise<void>((resolve) => {
      this.finish = resolve;
    });
    return ExecuteSuccessEvent.dummy(key, { value: 42, runId: 7, stimulusId: `done-${key}` });
  }
}

/** The value digested under `name` (joined with "/"); undefined if none was. */
function metric(w: MockWorker, name: string): number | undefined {
  return w.metrics.find(([n]) => n.join("/") === name)?.[1];
}

async function settle(w: BaseWorker): Promise<void> {
  for (let i = 0; i < 50 && w.asyncInstructionCount > 0; i++) {
    await new Promise((r) => setTimeout(r, 1));
  }
}

describe("BaseWorker", () => {
  it("runs instructions and feeds their completion events back to the state machine", async () => {
    const w = new MockWorker(new WorkerState({ address: "127.0.0.1:1", validate: true }));
    w.handleStimulus(
      ComputeTaskEvent.dummy("y", { runId: 7, whoHas: { x: ["127.0.0.1:2"] }, stimulusId: "c-y" }),
    );
    await settle(w);
    // busy, retried later, then fetched; then y executed and reported.
    expect(w.gathers).toEqual(["127.0.0.1:2:x", "127.0.0.1:2:x"]);
    expect(w.executions).toEqual(["y"]);
    expect(w.state.tasks.get("y")?.state).toBe("memory");
    const ops = w.sent.map((m) => m.op);
    expect(ops).toEqual(["request-refresh-who-has", "add-keys", "task-finished"]);
    expect(w.sent.at(-1)).toMatchObject({ op: "task-finished", key: "y", runId: 7, status: "OK" });
    w.state.validateState();
  });

  it("reports metrics with the seed's activity labels", async () => {
    const w = new MockWorker(new WorkerState({ address: "127.0.0.1:1" }));
    w.handleStimulus(ComputeTaskEvent.dummy("inc-1", { runId: 7, stimulusId: "c" }));
    await settle(w);
    const names = w.metrics.map(([name]) => name.join("/"));
    expect(names).toContain("execute//inc/thread-cpu/seconds");
    expect(names).toContain("execute//inc/other/seconds");
  });

  it("feeds back an event returned at once in a later microtask, one task after another", async () => {
    const w = new MockWorker(
      new WorkerState({ address: "127.0.0.1:1", nthreads: 1, validate: true }),
    );
    w.syncExecute = true;
    w.handleStimulus(
      ComputeTaskEvent.dummy("a", { runId: 7, priority: [0], stimulusId: "c-a" }),
      ComputeTaskEvent.dummy("b", { runId: 7, priority: [1], stimulusId: "c-b" }),
    );
    // a ran when the worker started it; its event is not fed back inside the stimulus.
    expect(w.executions).toEqual(["a"]);
    expect(w.state.tasks.get("a")?.state).toBe("executing");
    expect(w.asyncInstructionCount).toBe(1);
    await settle(w);
    expect(w.executions).toEqual(["a", "b"]);
    expect(w.sent.map((m) => `${m.op}:${m.key}`)).toEqual(["task-finished:a", "task-finished:b"]);
    expect(w.asyncInstructionCount).toBe(0);
    w.state.validateState();
  });

  it("close() drops an event returned at once that was not fed back yet", async () => {
    const w = new MockWorker(new WorkerState({ address: "127.0.0.1:1" }));
    w.syncExecute = true;
    w.handleStimulus(ComputeTaskEvent.dummy("a", { stimulusId: "c" }));
    const closing = w.close(1);
    expect(await closing).toEqual([]);
    expect(w.asyncInstructionCount).toBe(0);
    expect(w.state.tasks.get("a")?.state).toBe("executing");
    expect(w.sent).toEqual([]);
  });

  it("close() cancels running instructions without feeding events back", async () => {
    const w = new MockWorker(new WorkerState({ address: "127.0.0.1:1" }));
    w.blockExecute = true;
    w.handleStimulus(ComputeTaskEvent.dummy("slow", { stimulusId: "c" }));
    await Promise.resolve();
    expect(w.asyncInstructionCount).toBe(1);
    const stuck = await w.close(1);
    expect(stuck).toEqual([]);
    expect(w.asyncInstructionCount).toBe(0);
    expect(w.state.tasks.get("slow")?.state).toBe("executing");
  });

  it("close(timeout) waits that many seconds for what ignores the abort, and names what still runs", async () => {
    const w = new GatedWorker(new WorkerState({ address: "127.0.0.1:1" }));
    w.handleStimulus(ComputeTaskEvent.dummy("slow", { stimulusId: "c" }));
    await Promise.resolve();
    const start = performance.now();
    expect(await w.close(0.05)).toEqual(["execute(slow)"]);
    expect(performance.now() - start).toBeGreaterThanOrEqual(45);
    w.finish();
  });

  it("close(Infinity) waits for every running instruction, however long: not a timer of 1 ms", async () => {
    // A Node.js timer longer than 2^31 - 1 ms (or of Infinity, NaN) fires after 1 ms.
    for (const timeout of [Number.POSITIVE_INFINITY, 3e6]) {
      const w = new GatedWorker(new WorkerState({ address: "127.0.0.1:1" }));
      w.handleStimulus(ComputeTaskEvent.dummy("slow", { stimulusId: "c" }));
      await Promise.resolve();
      let done: string[] | null = null;
      const closing = w.close(timeout).then((stuck) => {
        done = stuck;
      });
      await new Promise((r) => setTimeout(r, 30));
      expect(done, String(timeout)).toBeNull();
      w.finish();
      await closing;
      expect(done).toEqual([]);
    }
  });

  it("reports the time of a run not recorded by its ledger under other, less what it recorded", async () => {
    let t = 0;
    const w = new MockWorker(new WorkerState({ address: "127.0.0.1:1" }), () => t);
    w.handleStimulus(ComputeTaskEvent.dummy("inc-1", { runId: 7, stimulusId: "c" }));
    t = 10; // the run took 10 s, 0.001 of them recorded as thread-cpu
    await settle(w);
    expect(metric(w, "execute//inc/thread-cpu/seconds")).toBe(0.001);
    expect(metric(w, "execute//inc/other/seconds")).toBeCloseTo(9.999, 9);
  });

  it("reports no negative rest when the ledger recorded more than the run took", async () => {
    const w = new MockWorker(new WorkerState({ address: "127.0.0.1:1" }), () => 0);
    w.handleStimulus(ComputeTaskEvent.dummy("inc-1", { runId: 7, stimulusId: "c" }));
    await settle(w);
    expect(metric(w, "execute//inc/other/seconds")).toBe(0);
  });

  it("reports a fetch that brought none of its keys as missing", async () => {
    const w = new NothingFetchedWorker(new WorkerState({ address: "127.0.0.1:1" }));
    w.busyOnce = false;
    w.handleStimulus(
      ComputeTaskEvent.dummy("y", { runId: 7, whoHas: { x: ["127.0.0.1:2"] }, stimulusId: "c-y" }),
    );
    await settle(w);
    const names = w.metrics.map(([name]) => name.join("/"));
    expect(names).toContain("gather-dep/missing/seconds");
    expect(names).not.toContain("gather-dep/cancelled/seconds");
    expect(names).not.toContain("gather-dep/other/seconds");
  });

  it("reports a run whose task was released meanwhile as cancelled", async () => {
    const w = new GatedWorker(new WorkerState({ address: "127.0.0.1:1" }));
    w.handleStimulus(ComputeTaskEvent.dummy("inc-1", { runId: 7, stimulusId: "c" }));
    await Promise.resolve();
    w.handleStimulus(new FreeKeysEvent({ keys: ["inc-1"], stimulusId: "free" }));
    w.finish();
    await settle(w);
    const names = w.metrics.map(([name]) => name.join("/"));
    expect(names).toContain("execute//inc/cancelled/seconds");
    expect(names).not.toContain("execute//inc/other/seconds");
  });
});
