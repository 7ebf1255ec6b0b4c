import { describe, expect, it } from "vitest";
import type { DumpTask } from "../protocol/clusterDump.ts";
import { ComputeTaskEvent } from "../worker/state/events.ts";
import type { TaskState } from "../worker/state/taskState.ts";
import { WorkerState } from "../worker/state/workerState.ts";
import { compareTasks, generationOffset, taskDifferences } from "./taskComparison.ts";

/** A worker that must fetch `a` (from two peers) to compute `x`. */
function replayed(): WorkerState {
  const ws = new WorkerState({ address: "tcp://127.0.0.1:1", nthreads: 1 });
  ws.handleStimulus(
    ComputeTaskEvent.dummy("x", {
      whoHas: { a: ["tcp://127.0.0.1:3", "tcp://127.0.0.1:2"] },
      nbytes: { a: 8 },
      priority: [0, 4, 7],
      stimulusId: "compute-x",
    }),
  );
  return ws;
}

const ref = (t: TaskState) => ({ key: t.key, state: t.state });

/** `ts` as Dask's dump would record it, with `edits` applied. */
function dumped(ts: TaskState, edits: Partial<DumpTask> = {}): DumpTask {
  return {
    key: ts.key,
    state: ts.state,
    previous: ts.previous,
    next: ts.next,
    done: ts.done,
    priority: ts.priority === null ? null : [...ts.priority],
    nbytes: ts.nbytes,
    runId: ts.runId,
    dependencies: [...ts.dependencies].map(ref),
    dependents: [...ts.dependents].map(ref),
    waitingForData: [...ts.waitingForData].map(ref),
    waiters: [...ts.waiters].map(ref),
    whoHas: [...ts.whoHas],
    comingFrom: ts.comingFrom,
    resourceRestrictions: Object.fromEntries(ts.resourceRestrictions),
    exceptionText: ts.exceptionText,
    tracebackText: "",
    raw: {},
    ...edits,
  };
}

function task(ws: WorkerState, key: string): TaskState {
  const ts = ws.tasks.get(key);
  if (ts === undefined) throw new Error(`no task ${key}`);
  return ts;
}

describe("task comparison", () => {
  it("compares a falsy value as the absent field Dask's dump makes of it", () => {
    const x = task(replayed(), "x");
    expect(x.nbytes).toBeNull();
    expect(taskDifferences(dumped(x, { nbytes: 0, done: false, exceptionText: "" }), x)).toEqual(
      [],
    );
  });

  it("compares who_has as a set", () => {
    const a = task(replayed(), "a");
    const reversed = [...a.whoHas].reverse();
    expect(taskDifferences(dumped(a, { whoHas: reversed }), a)).toEqual([]);
  });

  it("reports each differing field, one alone included", () => {
    const ws = replayed();
    const x = task(ws, "x");
    expect(taskDifferences(dumped(x, { waitingForData: [] }), x)).toEqual([
      { field: "waiting_for_data", dumped: null, replayed: ["a"] },
    ]);
    expect(taskDifferences(dumped(x, { resourceRestrictions: { GPU: 1 } }), x)).toEqual([
      { field: "resource_restrictions", dumped: { GPU: 1 }, replayed: null },
    ]);
    const mismatches = compareTasks(
      new Map([["x", dumped(x, { waitingForData: [] })]]),
      new Map([["x", x]]),
      () => true,
    ).mismatches;
    expect(mismatches.map((m) => m.key)).toEqual(["x"]);
  });

  it("reports a task on one side only", () => {
    const ws = replayed();
    const x = task(ws, "x");
    const ghost = dumped(x, { key: "ghost", state: "memory" });
    const result = compareTasks(
      new Map([
        ["x", dumped(x)],
        ["ghost", ghost],
      ]),
      ws.tasks,
      () => true,
    );
    expect(result.compared).toBe(3);
    expect(result.mismatches).toEqual([
      { key: "a", dumped: null, replayed: task(ws, "a").state, fields: [] },
      { key: "ghost", dumped: "memory", replayed: null, fields: [] },
    ]);
  });

  it("shifts replayed generations by the most common offset among otherwise equal priorities", () => {
    const ws = replayed();
    const x = task(ws, "x");
    const a = task(ws, "a");
    const shifted = (ts: TaskState, by: number) => {
      const p = [...(ts.priority ?? [])];
      p[p.length - 1] += by;
      return p;
    };
    const dumpedTasks = new Map([
      ["x", dumped(x, { priority: shifted(x, 10) })],
      ["a", dumped(a, { priority: shifted(a, 10) })],
    ]);
    expect(generationOffset(dumpedTasks, ws.tasks, () => true)).toBe(10);
    const result = compareTasks(dumpedTasks, ws.tasks, () => true, true);
    expect(result.generationOffset).toBe(10);
    expect(result.mismatches).toEqual([]);
    // Not shifted: the priorities differ.
    expect(compareTasks(dumpedTasks, ws.tasks, () => true).mismatches).toHaveLength(2);
  });
});
