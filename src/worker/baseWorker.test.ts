import { describe, expect, it } from "vitest";
import { type AsyncInstructionContext, BaseWorker, type MetricName } from "./baseWorker.ts";
import {
  ComputeTaskEvent,
  ExecuteSuccessEvent,
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

  async execute(
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
});
