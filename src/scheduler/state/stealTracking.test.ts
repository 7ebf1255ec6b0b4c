import { describe, expect, test } from "vitest";
import type { GraphTask } from "../../protocol/messagesClient.ts";
import type { SchedulerEvent } from "./events.ts";
import { SchedulerState } from "./schedulerState.ts";
import type { TaskState } from "./taskState.ts";
import * as t from "./testing.ts";

/** Keys `t0`…`t{n-1}`, each made by `make`. */
function tasks(n: number, make: () => GraphTask): Record<string, GraphTask> {
  const out: Record<string, GraphTask> = {};
  for (let i = 0; i < n; i++) out[`t${i}`] = make();
  return out;
}

/** `task-finished` of `key` on `worker`, having computed for `seconds`. */
function finishedAfter(s: SchedulerState, worker: string, key: string, seconds: number) {
  const ev = t.taskFinished(worker, key, task(s, key).runId, 0);
  if (ev.kind !== "worker-message") throw new Error("not a worker message");
  return {
    ...ev,
    msg: { ...ev.msg, startstops: [{ action: "compute", start: 10, stop: 10 + seconds }] },
  } as SchedulerEvent;
}

function task(s: SchedulerState, key: string): TaskState {
  const ts = s.tasks.get(key);
  if (ts === undefined) throw new Error(`no task ${key}`);
  return ts;
}

/**
 * w1 (one thread) processing `t0`…`t4` of function `g`, each with one input
 * of 0 bytes (`empty`, of another function), `g`'s duration unknown (0.5 s).
 */
function unknownBacklog(): SchedulerState {
  const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
  s.handleStimulus(t.registerWorker("w1"));
  s.handleStimulus(t.updateGraph("c", { empty: t.task() }, ["empty"]));
  s.handleStimulus(t.taskFinished("w1", "empty", task(s, "empty").runId, 0));
  const graph = tasks(5, () => t.task(["empty"], { fn: "g" }));
  s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
  return s;
}

describe("stealing levels", () => {
  test("filed on a guessed duration, tasks are filed again once their function's is measured", () => {
    const s = unknownBacklog();
    const tracking = s.workStealing;
    // (0 B + 100 ms latency) / 0.5 s guessed = 0.2: level round(−2.32 + 6) = 4.
    for (let i = 0; i < 5; i++) expect(tracking.keyStealable.get(task(s, `t${i}`))).toBe(4);
    // A thief asks for the newest; that steal is in flight.
    s.handleStimulus(t.registerWorker("w2"));
    s.handleStimulus({ kind: "balance", stimulusId: "b1" });
    const inFlight = [...s.steals.keys()].map((ts) => ts.key);
    expect(inFlight).toContain("t4");
    // t0 ran 0.1 s: g's tasks still processing are filed again at
    // (0 + 0.1) / 0.1 = 1, level 6, but not those being stolen (Dask's
    // `recalculate_cost` skips the steals in flight).
    s.handleStimulus(finishedAfter(s, "w1", "t0", 0.1));
    expect(s.taskDuration(task(s, "t1"))).toBeCloseTo(0.1);
    for (let i = 1; i < 5; i++) {
      const ts = task(s, `t${i}`);
      if (inFlight.includes(ts.key)) expect(tracking.keyStealable.has(ts)).toBe(false);
      else expect(tracking.keyStealable.get(ts)).toBe(6);
    }
    s.validateState();
  });

  test("only tasks filed on a guessed duration and still processing are kept to be filed again", () => {
    const s = unknownBacklog();
    const tracking = s.workStealing;
    expect(tracking.unknownDurations.get("g")?.size).toBe(5);
    s.handleStimulus(finishedAfter(s, "w1", "t0", 0.1));
    // Filed again on g's measured duration: no longer kept.
    expect(tracking.unknownDurations.has("g")).toBe(false);
    // A task leaving processing is no longer kept either (nothing is held for good).
    const more: Record<string, GraphTask> = {};
    for (const key of ["u0", "u1"]) more[key] = t.task(["empty"], { fn: "h" });
    s.handleStimulus(t.updateGraph("c", more, ["u0", "u1"]));
    expect(tracking.unknownDurations.get("h")?.size).toBe(2);
    s.handleStimulus(t.fromClient({ op: "client-releases-keys", clientId: "c", keys: ["u1"] }));
    expect(s.tasks.has("u1")).toBe(false);
    expect([...(tracking.unknownDurations.get("h") ?? [])].map((ts) => ts.key)).toEqual(["u0"]);
    s.validateState();
  });
});

describe("fast tasks", () => {
  // Dask never steals the prefixes whose configured default duration
  // (`distributed.scheduler.default-task-durations`) is 1 ms or less. weft
  // configures none, so none is spared: a `split-shuffle` task, which weft
  // expects to take `unknownTaskDuration` like any other, is filed.
  test("a split-shuffle task is filed like any other", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { empty: t.task() }, ["empty"]));
    s.handleStimulus(t.taskFinished("w1", "empty", task(s, "empty").runId, 0));
    const graph = { "split-shuffle-1": t.task(["empty"]), "split-shuffle-2": t.task(["empty"]) };
    s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
    const ts = task(s, "split-shuffle-2");
    expect(ts.group.name).toBe("split-shuffle");
    expect(s.workStealing.keyStealable.get(ts)).toBe(4);
  });
});

describe("tasks pinned to their worker", () => {
  test("are not kept stealable: no thief may take them, and each round walked them all", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(
      t.registerWorker("w1", 1, {}, undefined, { name: "one" }),
      t.registerWorker("w2"),
    );
    const graph: Record<string, GraphTask> = {
      byAddress: t.task([], { workers: ["w1"] }),
      byName: t.task([], { workers: ["one"] }),
      byBoth: t.task([], { workers: ["w1", "one"] }),
      loose: t.task([], { workers: ["w1"], allowOtherWorkers: true }),
      either: t.task([], { workers: ["w1", "w2"] }),
      free: t.task([]),
    };
    s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
    const tracking = s.workStealing;
    const stealable = Object.keys(graph).filter((key) => tracking.keyStealable.has(task(s, key)));
    // Those another worker may run stay stealable, wherever placed.
    expect(stealable.sort()).toEqual(["either", "free", "loose"]);
    s.validateState();
  });
});

describe("a task restricted to a name its worker bears that is also a host", () => {
  test("stays stealable: the other workers of that host may run it", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    // A worker named after its host (as `--name $(hostname)` gives), and another there.
    s.handleStimulus(
      t.registerWorker("tcp://10.0.0.5:4001", 1, {}, undefined, { name: "10.0.0.5" }),
      t.registerWorker("tcp://10.0.0.5:4002", 1, {}, undefined, { name: "other" }),
    );
    const graph = tasks(4, () => t.task([], { workers: ["10.0.0.5"] }));
    s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
    const tracking = s.workStealing;
    const stealable = Object.keys(graph).filter((key) => tracking.keyStealable.has(task(s, key)));
    expect(stealable.sort()).toEqual(Object.keys(graph).sort());
    s.validateState();
  });
});
