import { describe, expect, test } from "vitest";
import { adaptiveTarget } from "./adaptive.ts";
import type { SchedulerEvent } from "./events.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

/** `n` independent tasks running `fn`, wanted by client c: their compute-tasks, by key. */
function submit(s: SchedulerState, n: number, fn: string, prefix = fn): Map<string, number> {
  const graph: Record<string, ReturnType<typeof t.task>> = {};
  for (let i = 0; i < n; i++) graph[`${prefix}-${i}`] = t.task([], { fn });
  const out = s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
  return new Map(t.computeTasks(out).map(({ msg }) => [msg.key, msg.runId]));
}

/** `task-finished` of `key` from `worker`, whose compute took `seconds`. */
function finished(worker: string, key: string, runId: number, seconds: number): SchedulerEvent {
  const ev = t.taskFinished(worker, key, runId);
  if (ev.kind !== "worker-message") throw new Error("unreachable");
  return {
    ...ev,
    msg: { ...ev.msg, startstops: [{ action: "compute", start: 10, stop: 10 + seconds }] },
  } as SchedulerEvent;
}

describe("occupancy follows what is learnt of durations (Dask's occupancy, computed from current averages)", () => {
  test("tasks assigned on the guessed duration count the measured one once a task of their function finishes", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"));
    const runs = submit(s, 10, "f");
    const w1 = s.workers.get("w1");
    if (w1 === undefined) throw new Error("no w1");
    expect(w1.occupancy).toBeCloseTo(10 * 0.5); // unknownTaskDuration each
    s.handleStimulus(finished("w1", "f-0", runs.get("f-0") ?? -1, 0.001));
    // Nine tasks left, each now expected to take 1 ms, not 0.5 s.
    expect(w1.occupancy).toBeCloseTo(9 * 0.001, 9);
    // Adaptive scaling reads it: 9 ms of work needs no second worker (it asked for one).
    expect(adaptiveTarget(s, 1)).toBe(1);
    s.validateState();
  });

  test("work stealing weighs the backlog at the measured duration: 9 ms of work is not worth a steal", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"));
    const runs = submit(s, 10, "f");
    s.handleStimulus(finished("w1", "f-0", runs.get("f-0") ?? -1, 0.001));
    s.handleStimulus(t.registerWorker("w2")); // idle: a thief
    const out = s.handleStimulus({ kind: "balance", stimulusId: "balance-1" });
    // At the guessed 0.5 s a task, w1 looked 4.5 s behind and was robbed of its backlog.
    expect(t.summarize(out)).toEqual([]);
    expect(s.workStealing.requested).toBe(0);
  });

  test("only the tasks of the function measured change, on every worker running them", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    const f = submit(s, 4, "f");
    submit(s, 2, "g");
    const occ = (w: string): number => s.workers.get(w)?.occupancy ?? -1;
    const total = occ("w1") + occ("w2");
    expect(total).toBeCloseTo(6 * 0.5);
    const [key, runId] = [...f][0];
    const holder = s.tasks.get(key)?.processingOn?.address ?? "";
    s.handleStimulus(finished(holder, key, runId, 2));
    // f now takes 2 s: the three f left count 2 s each, the two g still 0.5 s.
    expect(occ("w1") + occ("w2")).toBeCloseTo(3 * 2 + 2 * 0.5);
    s.validateState();
  });

  test("a seceded task counts for nothing, whatever is learnt of its function", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"));
    const runs = submit(s, 3, "f");
    s.handleStimulus(
      t.fromWorker("w1", {
        op: "long-running",
        key: "f-1",
        computeDuration: 0.2,
        runId: runs.get("f-1"),
      }),
    );
    const w1 = s.workers.get("w1");
    // f-0 and f-2, at the average learnt from the seceded task's 0.2 s.
    expect(w1?.occupancy).toBeCloseTo(2 * 0.2);
    s.handleStimulus(finished("w1", "f-0", runs.get("f-0") ?? -1, 0.4));
    // (0.2 + 0.4) / 2 = 0.3 for f-2 alone.
    expect(w1?.occupancy).toBeCloseTo(0.3);
    s.handleStimulus(finished("w1", "f-2", runs.get("f-2") ?? -1, 0.4));
    expect(w1?.occupancy).toBe(0);
    s.validateState();
  });

  test("tasks assigned and finished while a worker's kept sum is stale count at the durations of the read", () => {
    // Queuing on: a finish hands its slot to a queued task without reading occupancy.
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    const runs = submit(s, 8, "f");
    const w1 = s.workers.get("w1");
    const w2 = s.workers.get("w2");
    if (w1 === undefined || w2 === undefined) throw new Error("no workers");
    const keysOn = (ws: typeof w1): string[] => [...ws.processing.keys()].map((ts) => ts.key);
    const expected = (ws: typeof w1): number =>
      [...ws.processing.keys()].reduce((sum, ts) => sum + s.taskDuration(ts), 0);
    const finish = (key: string, seconds: number): void => {
      const runId = runs.get(key) ?? s.tasks.get(key)?.runId ?? -1;
      const out = s.handleStimulus(finished("w1", key, runId, seconds));
      for (const { msg } of t.computeTasks(out)) runs.set(msg.key, msg.runId);
    };
    const [k0, k1] = keysOn(w1);
    finish(k0, 1);
    // w1 took a queued task on its freed slot, and neither worker was re-costed.
    expect(keysOn(w1)).toHaveLength(2);
    expect(w1.occupancyEpoch).not.toBe(s.durations.epoch);
    expect(w2.occupancyEpoch).not.toBe(s.durations.epoch);
    finish(k1, 3);
    s.validateState();
    // f now averages 2 s: each worker counts its two tasks at it, read once.
    expect(s.durations.get("f")).toBe(2);
    expect(w1.occupancy).toBe(expected(w1));
    expect(w2.occupancy).toBe(expected(w2));
    expect(w1.occupancy + w2.occupancy).toBe(4 * 2);
    s.validateState();
  });

  test("validation reads no stale sum: a validated run rounds as one that is not", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    const f = submit(s, 4, "f");
    const w2 = s.workers.get("w2");
    const [key, runId] = [...f].find(([k]) => s.tasks.get(k)?.processingOn?.address === "w1") ?? [];
    s.handleStimulus(finished("w1", key ?? "", runId ?? -1, 0.25));
    const stale = w2?.occupancyEpoch;
    s.validateState();
    expect(w2?.occupancyEpoch).toBe(stale);
    expect(stale).not.toBe(s.durations.epoch);
  });
});
