import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { LoggedRecs, NO_RECS, TransitionLog, workerStory } from "./log.ts";
import { TASK_STATES } from "./taskState.ts";

describe("TransitionLog", () => {
  it("keeps records of every width, oldest first, as tuples", () => {
    const log = new TransitionLog(10);
    log.add4("k", "put-in-memory", "s1", 1);
    log.add5("k", "compute-task", "released", "s1", 2);
    log.add7("k", "released", "waiting", "waiting", NO_RECS, "s1", 3);
    log.addTransition1("k", "waiting", "ready", "executing", "k", "executing", "s1", 4);
    log.push(["free-keys", ["k"], "s2", 5]);
    const all = log.toArray();
    expect(all.length).toBe(5);
    expect(all[0]).toEqual(["k", "put-in-memory", "s1", 1]);
    expect(all[1]).toEqual(["k", "compute-task", "released", "s1", 2]);
    expect(all[2].slice(0, 4)).toEqual(["k", "released", "waiting", "waiting"]);
    expect((all[3][4] as LoggedRecs).toMap()).toEqual(new Map([["k", "executing"]]));
    expect(all[3]).toHaveLength(7);
    expect(all[4]).toEqual(["free-keys", ["k"], "s2", 5]);
    expect(log.at(-1)).toEqual(["free-keys", ["k"], "s2", 5]);
    expect(log.at(99)).toBeUndefined();
  });

  it("keeps every state of a transition, packed as numbers, and its recommendations", () => {
    const log = new TransitionLog(100);
    for (const a of TASK_STATES) {
      for (const b of TASK_STATES) {
        log.addTransition1(`k-${a}`, a, b, a, `r-${b}`, b, "s", 1);
        log.addTransition(`k-${b}`, b, a, b, NO_RECS, "s", 2);
      }
    }
    const records = log.toArray();
    expect(records).toHaveLength(100);
    // The last 50 of the 450 records: the last pairs of (a, b) in order.
    const pairs = TASK_STATES.flatMap((a) => TASK_STATES.map((b) => [a, b])).slice(-50);
    records.forEach((r, i) => {
      const [a, b] = pairs[i >> 1];
      if (i % 2 === 0) {
        expect(r.slice(0, 4)).toEqual([`k-${a}`, a, b, a]);
        expect((r[4] as LoggedRecs).toMap()).toEqual(new Map([[`r-${b}`, b]]));
      } else {
        expect(r).toEqual([`k-${b}`, b, a, b, NO_RECS, "s", 2]);
      }
    });
  });

  it("keeps records of five to seven fields whole, next to records of four slots", () => {
    const log = new TransitionLog(3);
    log.add5("a", "compute-task", "released", "s1", 1);
    log.add4("b", "missing-dep", "s2", 2);
    log.add5("c", "ensure-task-exists", "fetch", "s3", 3);
    expect(log.toArray()).toEqual([
      ["a", "compute-task", "released", "s1", 1],
      ["b", "missing-dep", "s2", 2],
      ["c", "ensure-task-exists", "fetch", "s3", 3],
    ]);
    const entry = ["x", "y", "z", 1, 2, 3, "t"];
    log.push(entry);
    log.add7("k", "released", "waiting", "waiting", NO_RECS, "s", 4);
    log.push(["k", "s"]);
    entry[0] = "changed";
    expect(log.toArray()).toEqual([
      ["x", "y", "z", 1, 2, 3, "t"],
      ["k", "released", "waiting", "waiting", NO_RECS, "s", 4],
      ["k", "s"],
    ]);
    // A record read is a copy: changing it changes nothing in the log.
    (log.at(0) as unknown[])[0] = "again";
    expect(log.at(0)?.[0]).toBe("x");
  });

  it("keeps fractional times exactly (they live in a Float64Array column)", () => {
    const log = new TransitionLog(4);
    const t = 1_764_460_800.123456;
    log.addTransition1("k", "waiting", "ready", "executing", "k", "executing", "s", t);
    log.add7("k", "ready", "executing", "executing", NO_RECS, "s", t + 1);
    log.add4("k", "put-in-memory", "s", t + 2);
    log.push(["k", "missing-dep", "s", "not a number"]);
    expect([...log].map((r) => r[r.length - 1])).toEqual([t, t + 1, t + 2, "not a number"]);
  });

  it("evicts the oldest records beyond maxlen, like deque(maxlen=n)", () => {
    const log = new TransitionLog(100);
    for (let i = 0; i < 1000; i++) log.add4(`k${i}`, "missing-dep", `s${i}`, i);
    expect(log.length).toBe(100);
    expect(log.at(0)?.[0]).toBe("k900");
    expect(log.at(-1)?.[0]).toBe("k999");
    expect([...log].map((r) => r[3])).toEqual(Array.from({ length: 100 }, (_, i) => 900 + i));
  });

  it("keeps deque order across storage chunks, before and after wrapping", () => {
    for (const [maxlen, n] of [
      [600, 500],
      [600, 2_000],
      [256, 257],
    ]) {
      const log = new TransitionLog(maxlen);
      for (let i = 0; i < n; i++) log.add4(`k${i}`, "missing-dep", `s${i}`, i + 0.5);
      const kept = Math.min(maxlen, n);
      const want = Array.from({ length: kept }, (_, j) => n - kept + j + 0.5);
      expect([...log].map((r) => r[3])).toEqual(want);
      expect(log.at(-1)?.[0]).toBe(`k${n - 1}`);
      expect(log.at(0)?.[0]).toBe(`k${n - kept}`);
    }
  });

  it("is found by story through keys, stimulus ids and collections, not recommendations", () => {
    const log = new TransitionLog(10);
    log.add5("gather-dependencies", "w", new Set(["a", "b"]), "s1", 0);
    log.add7(
      "c",
      "released",
      "fetch",
      "fetch",
      new LoggedRecs(null, null, ["a", "fetch"]),
      "s2",
      0,
    );
    log.add4("free-keys", ["b"], "s3", 0);
    expect(workerStory(new Set(["a"]), log).map((r) => r[3])).toEqual(["s1"]);
    expect(workerStory(new Set(["b"]), log).length).toBe(2);
    expect(workerStory(new Set(["s2"]), log).map((r) => r[0])).toEqual(["c"]);
  });

  it("prints logged recommendations as the {key: state} they stand for", () => {
    expect(inspect(new LoggedRecs(null, null, ["a", "fetch", "b", "memory"]))).toBe(
      "{ a: 'fetch', b: 'memory' }",
    );
    expect(inspect(new LoggedRecs("x", "fetch"))).toBe("{ x: 'fetch' }");
    expect(inspect(NO_RECS)).toBe("{}");
  });
});

describe("WorkerState.toDict", () => {
  it("gives the debugging dict of the seed's _to_dict", async () => {
    const { WorkerState } = await import("./workerState.ts");
    const { ComputeTaskEvent, ExecuteSuccessEvent } = await import("./events.ts");
    const ws = new WorkerState({ address: "127.0.0.1:1" });
    ws.handleStimulus(
      ComputeTaskEvent.dummy("y", { whoHas: { x: ["127.0.0.1:2"] }, stimulusId: "s" }),
    );
    const d = ws.toDict();
    expect(d.address).toBe("127.0.0.1:1");
    expect(d.transition_counter).toBe(ws.transitionCounter);
    expect(d.in_flight_workers).toEqual({ "127.0.0.1:2": ["x"] });
    expect((d.tasks as Record<string, Record<string, unknown>>).y).toMatchObject({
      key: "y",
      state: "waiting",
      dependencies: ["<TaskState 'x' flight>"],
    });
    expect(d.task_counts).toEqual({ "('y', 'waiting')": 1, "('x', 'flight')": 1 });
    expect(JSON.parse(JSON.stringify(d))).toEqual(d);
    expect(Object.keys(ws.toDict(["log", "tasks"]))).not.toContain("log");
    // Every truthy attribute of a task is kept: done, once computed here.
    ws.handleStimulus(
      ComputeTaskEvent.dummy("z", { stimulusId: "s2" }),
      ExecuteSuccessEvent.dummy("z", { stimulusId: "s3" }),
    );
    expect((ws.toDict().tasks as Record<string, Record<string, unknown>>).z).toMatchObject({
      state: "memory",
      done: true,
    });
    // The stimulus log's events in Dask's dict form, as the seed's event _to_dict; and
    // exclude passed down to tasks and events, as its recursive_to_dict does.
    const events = ws.toDict().stimulus_log as Record<string, unknown>[];
    expect(events[0]).toMatchObject({
      cls: "ComputeTaskEvent",
      stimulus_id: "s",
      key: "y",
      who_has: { x: ["127.0.0.1:2"] },
      handled: 0,
    });
    expect(Object.keys(events[0]).some((k) => /[A-Z]/.test(k))).toBe(false);
    const lean = ws.toDict(["state", "stimulus_id"]);
    expect((lean.tasks as Record<string, Record<string, unknown>>).z.state).toBeUndefined();
    expect((lean.stimulus_log as Record<string, unknown>[])[0].stimulus_id).toBeUndefined();
  });
});
