import { describe, expect, it } from "vitest";
import type { GraphTask } from "../protocol/messagesClient.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import { SchedulerState } from "./state/schedulerState.ts";
import * as t from "./state/testing.ts";
import { logWorkerLoss, workerLoss } from "./workerLoss.ts";

/**
 * The worker w1 holds the scattered `a`, which the first of a chain of `length` tasks
 * waits for (with `z`, running): client c1, a task's of w1, wants the chain's end, and
 * so does c2 if `outside`.
 */
function chainOnW1(length: number, outside: boolean): SchedulerState {
  const s = new SchedulerState({ validate: false });
  s.handleStimulus(t.registerWorker("w1"));
  s.handleStimulus(t.updateData("c1", { a: ["w1"] }));
  const tasks: Record<string, GraphTask> = { z: t.task(), "t-0": t.task(["a", "z"]) };
  for (let i = 1; i < length; i++) tasks[`t-${i}`] = t.task([`t-${i - 1}`]);
  const end = `t-${length - 1}`;
  s.handleStimulus(t.updateGraph("c1", tasks, [end]));
  // c1 lets a go: only the chain waits for it now.
  s.handleStimulus(t.releaseKeys("c1", ["a"]));
  if (outside) s.handleStimulus(t.updateGraph("c2", tasks, [end]));
  return s;
}

const workerOf = (client: string) => (client === "c1" ? "w1" : undefined);

describe("workerLoss", () => {
  it("counts a result as lost as a task waiting for it is wanted, however far down", () => {
    // Deep enough that walking the waiters by recursion overflowed the stack.
    const length = 50_000;
    const inside = chainOnW1(length, false);
    expect(inside.tasks.get("a")?.waiters.size).toBe(1);
    expect(workerLoss(inside, "w1", workerOf)).toEqual({
      processing: 1,
      memory: 1,
      recomputed: [],
      lost: [],
      actors: [],
    });
    expect(workerLoss(chainOnW1(length, true), "w1", workerOf)).toEqual({
      processing: 1,
      memory: 1,
      recomputed: [],
      lost: ["a"],
      actors: [],
    });
  });

  it("tells an actor from a result: lost, never computed again", () => {
    const s = new SchedulerState({ validate: false });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(
      t.updateGraph("c2", { act: t.task([], { actor: true }), r: t.task() }, ["act", "r"]),
    );
    for (const key of ["act", "r"]) {
      s.handleStimulus(t.taskFinished("w1", key, s.tasks.get(key)?.runId as number));
    }
    const loss = workerLoss(s, "w1", workerOf);
    expect(loss).toMatchObject({ recomputed: ["r"], lost: [], actors: ["act"] });
    const { logger, records } = memoryLogger();
    logWorkerLoss(logger, "warn", "w1", "worker left", loss);
    expect(records.map((r) => r.msg).slice(1)).toEqual([
      "the worker at w1 left holding the only copy of 1 result, which will be computed again: r",
      "the worker at w1 left holding 1 actor, lost for good (its futures fail: Worker holding Actor was lost): act",
    ]);
  });

  it("is null for a worker it does not know", () => {
    expect(workerLoss(new SchedulerState({ validate: false }), "w9", workerOf)).toBeNull();
  });

  it("says the scattered values lost as one or as several", () => {
    const said = (lost: string[]) => {
      const { logger, records } = memoryLogger();
      logWorkerLoss(logger, "warn", "tcp://w1:1", "worker left", {
        processing: 0,
        memory: lost.length,
        recomputed: [],
        lost,
        actors: [],
      });
      return records.map((r) => r.msg).at(-1);
    };
    expect(said(["a"])).toBe(
      "the worker at tcp://w1:1 left holding the only copy of 1 scattered value, lost for good (no task computes it again): a",
    );
    // It said "2 scattered values, lost for good (no task computes it again)".
    expect(said(["a", "b"])).toBe(
      "the worker at tcp://w1:1 left holding the only copy of 2 scattered values, lost for good (no task computes them again): a, b",
    );
  });
});
