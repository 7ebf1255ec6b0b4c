import { describe, expect, it } from "vitest";
import { schedulerMessage } from "./schedulerMessage.ts";
import {
  ComputeTaskEvent,
  ExecuteFailureEvent,
  GatherDepFailureEvent,
  type StateMachineEvent,
} from "./state/events.ts";
import { isSendMessageToScheduler } from "./state/instructions.ts";
import { WorkerState } from "./state/workerState.ts";

/** The scheduler messages a shell sends for `stims`. */
function messages(ws: WorkerState, stims: StateMachineEvent[]): Record<string, unknown>[] {
  return ws
    .handleStimuli(stims)
    .filter(isSendMessageToScheduler)
    .map((inst) => schedulerMessage(inst, stims));
}

describe("schedulerMessage", () => {
  const peer = "tcp://127.0.0.1:2";

  it("marks the task-erred of a key whose fetch failed, so the scheduler fails its tasks here", () => {
    const ws = new WorkerState({ address: "tcp://127.0.0.1:1", validate: true });
    ws.handleStimulus(
      ComputeTaskEvent.dummy("y", { whoHas: { x: [peer] }, nbytes: { x: 10 }, stimulusId: "c-y" }),
    );
    const failed = GatherDepFailureEvent.fromException(new Error("too large"), {
      worker: peer,
      totalNbytes: 10,
      stimulusId: "gather-failed",
    });
    const sent = messages(ws, [failed]);
    expect(sent).toEqual([
      expect.objectContaining({ op: "task-erred", key: "x", runId: -1, fetchFailed: true }),
    ]);
  });

  it("leaves the task-erred of a failed run unmarked", () => {
    const ws = new WorkerState({ address: "tcp://127.0.0.1:1", validate: true });
    ws.handleStimulus(ComputeTaskEvent.dummy("x", { runId: 3, stimulusId: "c-x" }));
    const sent = messages(ws, [ExecuteFailureEvent.dummy("x", { runId: 3, stimulusId: "failed" })]);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ op: "task-erred", key: "x", runId: 3 });
    expect(sent[0]).not.toHaveProperty("fetchFailed");
  });
});
