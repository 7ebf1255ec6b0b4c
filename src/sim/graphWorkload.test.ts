import { expect, test } from "vitest";
import { NO_FAULTS } from "./faults.ts";
import { GRAPH_TASK_DURATION, GRAPH_TASK_NBYTES, graphWorkload } from "./graphWorkload.ts";
import { resolveSimOptions } from "./options.ts";
import { replayCommand } from "./replay.ts";
import { shrink } from "./shrink.ts";
import { simulate } from "./simulation.ts";

/** Listed dependents first, so that the workload must reorder it. */
const GRAPH = {
  total: ["sum", "double", "c"],
  double: ["mul", "c", 2],
  c: ["add", "a", "b"],
  a: ["load", "part-1.csv"],
  b: ["load", "part-2.csv"],
  alias: "double",
  factor: 3,
};

test("a graph becomes a workload of its tasks, dependencies first, its sinks wanted", () => {
  const w = graphWorkload(GRAPH);
  expect(w.name).toBe("graph(5)");
  const keys = w.tasks.map((t) => t.key);
  for (const [i, t] of w.tasks.entries()) for (const d of t.deps) expect(d).toBeLessThan(i);
  const total = w.tasks[keys.indexOf("total")];
  expect(total.fn).toBe("sum");
  // Inputs in argument order, each once; literals and the strings that are no key are no input.
  expect(total.deps.map((d) => keys[d])).toEqual(["double", "c"]);
  expect(w.tasks[keys.indexOf("c")].deps.map((d) => keys[d])).toEqual(["a", "b"]);
  expect(w.tasks[keys.indexOf("a")].deps).toEqual([]);
  // `alias` stands for `double`, which total uses: the sinks are total and double.
  expect(w.wanted.map((i) => keys[i]).sort()).toEqual(["double", "total"]);
  expect(w.tasks.every((t) => t.duration === GRAPH_TASK_DURATION)).toBe(true);
  expect(w.tasks.every((t) => t.nbytes === GRAPH_TASK_NBYTES)).toBe(true);
});

test("keys choose what is wanted, and only the tasks they need are run", () => {
  const w = graphWorkload(GRAPH, { keys: ["c"] });
  expect(w.tasks.map((t) => t.key).sort()).toEqual(["a", "b", "c"]);
  expect(w.wanted.map((i) => w.tasks[i].key)).toEqual(["c"]);
  // An alias asks for the task it stands for.
  const aliased = graphWorkload(GRAPH, { keys: ["alias"] });
  expect(aliased.wanted.map((i) => aliased.tasks[i].key)).toEqual(["double"]);
  // Costs for the whole graph stay valid when keys ask for a part of it.
  const part = graphWorkload(GRAPH, { keys: ["c"], byFunction: { sum: { duration: 2 } } });
  expect(part.tasks.map((t) => t.fn).sort()).toEqual(["add", "load", "load"]);
  // A key named twice, or with an alias of it, is wanted once, in the order first named.
  const twice = graphWorkload(GRAPH, { keys: ["c", "alias", "double", "c"] });
  expect(twice.wanted.map((i) => twice.tasks[i].key)).toEqual(["c", "double"]);
});

test("costs: for every task, then by function name over them; retries and resources carry over", () => {
  const w = graphWorkload(GRAPH, {
    duration: 0.2,
    nbytes: 10,
    byFunction: { load: { duration: 1, nbytes: 5_000_000 } },
    retries: 2,
    resources: { GPU: 1 },
  });
  const load = w.tasks.find((t) => t.key === "a");
  const add = w.tasks.find((t) => t.key === "c");
  expect([load?.duration, load?.nbytes, add?.duration, add?.nbytes]).toEqual([
    1, 5_000_000, 0.2, 10,
  ]);
  expect(w.tasks.every((t) => t.retries === 2 && t.resources?.GPU === 1)).toBe(true);
  // Workers that supply resources get what the tasks need, so that every task can run.
  expect(w.workerResources).toEqual({ GPU: 1 });
});

test("a graph the simulator cannot run is refused, naming why", () => {
  expect(() => graphWorkload({ a: ["inc", "b"], b: ["inc", "a"], c: ["inc", "a"] })).toThrow(
    "graphWorkload: the graph has a cycle: ",
  );
  expect(() => graphWorkload({ a: ["inc", "b"], b: ["inc", "a"] })).toThrow(
    "the graph has a cycle: ",
  );
  expect(() => graphWorkload(GRAPH, { keys: ["nope"] })).toThrow('the graph has no key "nope"');
  expect(() => graphWorkload(GRAPH, { keys: ["factor"] })).toThrow("is a literal, not a task");
  expect(() => graphWorkload({})).toThrow("the graph has no tasks");
  expect(() => graphWorkload({ a: 1 })).toThrow("the graph has no tasks");
  expect(() => graphWorkload(GRAPH, { byFunction: { lod: { duration: 1 } } })).toThrow(
    'byFunction names "lod", which no task of the graph calls',
  );
  expect(() => graphWorkload(GRAPH, { duration: -1 })).toThrow("duration must be a number");
  expect(() => graphWorkload(GRAPH, { nbytes: 1.5 })).toThrow("nbytes must be an integer");
  expect(() => graphWorkload(GRAPH, { keyz: ["a"] } as never)).toThrow('unknown option "keyz"');
  expect(() => graphWorkload(GRAPH, { name: "" })).toThrow("name must be a non-empty string");
  expect(() => graphWorkload(GRAPH, { flags: 5 } as never)).toThrow(
    "flags must be a non-empty string, got 5",
  );
});

test("a graph runs under every fault with the right values, seed after seed, and a seed replays", () => {
  const w = graphWorkload(GRAPH, { byFunction: { load: { nbytes: 20_000_000 } } });
  let faults = 0;
  for (let seed = 1; seed <= 12; seed++) {
    // A run checks every value the client gets against the checksums of the graph.
    const r = simulate({ seed, workload: w, workers: 3 });
    expect(r.ok, r.failure?.message).toBe(true);
    expect(r.workload).toBe("graph(5)");
    faults += Object.values(r.stats.faults).reduce((a, b) => a + b, 0);
    // The run's options run it again, event for event.
    const again = simulate({ ...r.options, hooks: undefined, seed });
    expect(again.stats).toEqual(r.stats);
  }
  expect(faults).toBeGreaterThan(0);
});

test("a graph's wrong value is caught; shrinking keeps the graph and shrinks the rest", () => {
  const w = graphWorkload(GRAPH);
  // Without faults, the wrong value is not lost with its worker before the client gets it.
  const r = simulate({ seed: 3, workload: w, variant: "wrong-value", faults: NO_FAULTS });
  expect(r.ok).toBe(false);
  expect(r.failure?.kind).toBe("wrong-value");
  const s = shrink(r, { budget: 30 });
  expect(s.smallest.options.workload).toBe(w);
  expect(s.smallest.options.tasks).toBe(5);
  expect(s.smallest.options.workers).toBeLessThan(4);
});

test("a given workload: tasks and actors may only repeat it; a broken one is refused", () => {
  const w = graphWorkload(GRAPH);
  expect(resolveSimOptions({ seed: 1, workload: w }).tasks).toBe(5);
  expect(resolveSimOptions({ seed: 1, workload: w }).actors).toBe(0);
  expect(() => resolveSimOptions({ seed: 1, workload: w, tasks: 40 })).toThrow(
    "the given workload has 5 tasks of its own",
  );
  expect(() => resolveSimOptions({ seed: 1, workload: w, actors: 0.1 })).toThrow(
    "a given workload's tasks are actors as it says",
  );
  const backwards = { ...w, tasks: [...w.tasks].reverse() };
  expect(() => resolveSimOptions({ seed: 1, workload: backwards })).toThrow(
    "must be indices of earlier tasks",
  );
  expect(() => resolveSimOptions({ seed: 1, workload: { ...w, wanted: [] } })).toThrow(
    "wanted must be a non-empty array",
  );
  // A misspelt field would be ignored, unsaid: a task without the retries it was given.
  const misspelt = { ...w, tasks: w.tasks.map((t, i) => (i === 0 ? { ...t, retry: 3 } : t)) };
  expect(() => resolveSimOptions({ seed: 1, workload: misspelt })).toThrow(
    'workload tasks[0] has an unknown field "retry"',
  );
  // `resources` is a task's field; the workers' is workerResources.
  const workerLevel = { ...w, resources: { GPU: 1 } } as never;
  expect(() => resolveSimOptions({ seed: 1, workload: workerLevel })).toThrow(
    'workload has an unknown field "resources"',
  );
});

test("the replay line names the flags that read the graph again, or says a program gave it", () => {
  const fromFile = graphWorkload(GRAPH, { flags: "--graph g.json --task-duration 0.2" });
  const o = resolveSimOptions({ seed: 4, workload: fromFile, workers: 2 });
  expect(replayCommand(o)).toBe("weft sim --seed 4 --graph g.json --task-duration 0.2 --workers 2");
  const own = resolveSimOptions({ seed: 4, workload: graphWorkload(GRAPH) });
  expect(replayCommand(own)).toBe(
    "weft sim --seed 4 (not weft sim flags: workload=graph(5) (a program's))",
  );
});
