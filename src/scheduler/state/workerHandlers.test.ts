import { describe, expect, test } from "vitest";
import { InvalidStimulus } from "./errors.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

/** A scheduler with `workers` one-thread workers and no queuing. */
function cluster(...workers: string[]): SchedulerState {
  const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
  s.handleStimulus(...workers.map((w) => t.registerWorker(w)));
  return s;
}

describe("task-finished", () => {
  test("a stale run id from another worker gets free-keys; the current run is unaffected", () => {
    const s = cluster("w1", "w2");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    const x = s.tasks.get("x");
    expect(x?.processingOn?.address).toBe("w1");
    const out = s.handleStimulus(t.taskFinished("w2", "x", 99));
    expect(t.summarize(out)).toEqual(["w2 free-keys x"]);
    expect(x?.state).toBe("processing");
  });

  test("the current run reported by a worker it was not given to is freed there, not taken", () => {
    const s = cluster("w1", "w2");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    const x = s.tasks.get("x");
    expect(x?.processingOn?.address).toBe("w1");
    const out = s.handleStimulus(t.taskFinished("w2", "x", x?.runId ?? 0));
    expect(t.summarize(out)).toEqual(["w2 free-keys x"]);
    expect(x?.state).toBe("processing");
    expect(t.summarize(s.handleStimulus(t.taskErred("w2", "x", x?.runId ?? 0)))).toEqual([]);
    expect(x?.state).toBe("processing");
    s.validateState();
  });

  test("startstops that are not {action, start, stop} are refused as an invalid stimulus", () => {
    const s = cluster("w1");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    const bad = t.fromWorker("w1", {
      op: "task-finished",
      key: "x",
      runId: 1,
      nbytes: 8,
      typename: "number",
      startstops: [null],
    });
    expect(() => s.handleStimulus(bad)).toThrow(InvalidStimulus);
    expect(() => s.handleStimulus(bad)).toThrow(
      /startstops must hold \{action: string, start: number, stop: number\}/,
    );
    expect(s.tasks.get("x")?.state).toBe("processing");
    s.validateState();
  });

  test("a stale run id from the worker processing it sends the task round again", () => {
    const s = cluster("w1");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    const out = s.handleStimulus(t.taskFinished("w1", "x", 99));
    expect(t.summarize(out)).toEqual(["w1 free-keys x", "w1 compute-task x"]);
    expect(s.tasks.get("x")?.runId).toBe(2);
  });

  test("a stale run reported by a worker holding the current result is ignored", () => {
    const s = cluster("w1");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    s.handleStimulus(t.fromWorker("w1", { op: "reschedule", key: "x" })); // run 2
    s.handleStimulus(t.taskFinished("w1", "x", 2));
    expect(s.handleStimulus(t.taskFinished("w1", "x", 1))).toEqual([]);
    expect(s.tasks.get("x")?.whoHas.size).toBe(1);
    s.validateState();
  });

  test("a stale run reported by a worker running a task that needs the key is ignored", () => {
    const s = cluster("w1", "w2");
    s.handleStimulus(t.registerWorker("w3", 1, { R: 1 }));
    const tasks = { x: t.task([], { workers: ["w1"] }), y: t.task(["x"], { resources: { R: 1 } }) };
    s.handleStimulus(t.updateGraph("c", tasks, ["y"]));
    s.handleStimulus(t.taskFinished("w1", "x", 1));
    // y runs on w3, which fetches x; a late report of an old run of x from w3 must not
    // free it there (it would cancel the fetch y waits for).
    expect(s.tasks.get("y")?.processingOn?.address).toBe("w3");
    expect(s.handleStimulus(t.taskFinished("w3", "x", 0))).toEqual([]);
    // Anywhere else it is freed, as before.
    expect(t.summarize(s.handleStimulus(t.taskFinished("w2", "x", 0)))).toEqual(["w2 free-keys x"]);
    s.validateState();
  });

  test("a result for a forgotten or released key is freed on the worker", () => {
    const s = cluster("w1");
    expect(t.summarize(s.handleStimulus(t.taskFinished("w1", "nope", 1)))).toEqual([
      "w1 free-keys nope",
    ]);
  });

  test("messages from unknown workers are ignored", () => {
    const s = cluster("w1");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    expect(s.handleStimulus(t.taskFinished("ghost", "x", 1))).toEqual([]);
    expect(s.tasks.get("x")?.state).toBe("processing");
  });

  test("a second report of the same run adds a replica", () => {
    const s = cluster("w1", "w2");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    s.handleStimulus(t.taskFinished("w1", "x", 1));
    expect(s.handleStimulus(t.taskFinished("w2", "x", 1))).toEqual([]);
    expect([...(s.tasks.get("x")?.whoHas ?? [])].map((w) => w.address)).toEqual(["w1", "w2"]);
    s.validateState();
  });

  test("a second report of the same run from a worker asked for a copy is that copy, as add-keys", () => {
    const s = cluster("w1", "w2");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    s.handleStimulus(t.taskFinished("w1", "x", 1));
    expect(t.summarize(s.handleStimulus(t.replicate("c", ["x"], { n: 2 }, "rep")))).toEqual([
      "w2 acquire-replicas",
    ]);
    // w2 holds x now (its acquire-replicas, arriving later, fetches nothing and reports
    // nothing): the copy the replicate waits for has arrived.
    const out = s.handleStimulus(t.taskFinished("w2", "x", 1));
    expect(out.map((m) => [m.msg.op, m.msg.stimulusId])).toEqual([["replicated", "rep"]]);
    s.validateState();
  });

  test("compute durations feed the estimates of later tasks of the same function", () => {
    const s = cluster("w1");
    s.handleStimulus(t.updateGraph("c", { x: t.task([], { fn: "slow" }) }, ["x"]));
    s.handleStimulus(
      t.fromWorker("w1", {
        op: "task-finished",
        key: "x",
        runId: 1,
        nbytes: 8,
        typename: "number",
        startstops: [{ action: "compute", start: 10, stop: 13 }],
        metadata: { note: 1 },
      }),
    );
    expect(s.durations.get("slow")).toBe(3);
    expect(s.tasks.get("x")?.metadata).toEqual({ note: 1 });
    const out = s.handleStimulus(t.updateGraph("c", { y: t.task([], { fn: "slow" }) }, ["y"]));
    expect(t.computeTasks(out)[0].msg.duration).toBe(3);
    expect(s.workers.get("w1")?.occupancy).toBe(3);
  });

  test("task metadata merges the workers' reports; an empty report adds nothing", () => {
    const s = cluster("w1");
    s.handleStimulus(t.updateGraph("c", { x: t.task(), y: t.task() }, ["x", "y"]));
    const finished = (key: string, metadata: Record<string, unknown>) =>
      t.fromWorker("w1", {
        op: "task-finished",
        key,
        runId: s.tasks.get(key)?.runId ?? -1,
        nbytes: 8,
        typename: "number",
        startstops: [],
        metadata,
      });
    s.handleStimulus(finished("x", {}), finished("y", { a: 1, b: 2 }));
    expect(s.tasks.get("x")?.metadata).toBeNull();
    expect(s.tasks.get("y")?.metadata).toEqual({ a: 1, b: 2 });
    s.validateState();
  });
});

describe("task-erred", () => {
  test("is ignored for a task not processing, or of a stale run on another worker", () => {
    const s = cluster("w1", "w2");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    expect(s.handleStimulus(t.taskErred("w2", "x", 7))).toEqual([]);
    expect(s.handleStimulus(t.taskErred("w1", "unknown", 1))).toEqual([]);
    expect(s.tasks.get("x")?.state).toBe("processing");
  });

  test("of a stale run on the worker processing it, re-runs the task", () => {
    const s = cluster("w1");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    const out = s.handleStimulus(t.taskErred("w1", "x", 7));
    expect(t.summarize(out)).toEqual(["w1 free-keys x", "w1 compute-task x"]);
  });

  /** `x` in memory on w1; `y(x)`, bound to w2 by a resource, processing there. */
  function fetching(retries = 0): SchedulerState {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2", 1, { R: 1 }));
    s.handleStimulus(
      t.updateGraph("c", { x: t.task(), y: t.task(["x"], { resources: { R: 1 }, retries }) }, [
        "y",
      ]),
    );
    s.handleStimulus(t.taskFinished("w1", "x", 1));
    expect(s.tasks.get("y")?.processingOn?.address).toBe("w2");
    return s;
  }

  test("of an input a worker could not fetch, errs its tasks needing it there and frees them", () => {
    const s = fetching();
    const out = s.handleStimulus(t.fetchErred("w2", "x", -1, "RemoteError: too large"));
    // w2 drops y and its erred copy of x; x, needed by nothing any more, is
    // released as after any error.
    expect(t.summarize(out)).toEqual([
      "w2 free-keys y,x",
      "client:c task-erred y",
      "w1 free-keys x",
    ]);
    const y = s.tasks.get("y");
    expect(y?.state).toBe("erred");
    expect(y?.exceptionText).toBe("RemoteError: too large (while fetching its input x)");
    s.validateState();
  });

  test("of an input a worker could not fetch, retries the tasks needing it while retries last", () => {
    const s = fetching(1);
    const out = s.handleStimulus(t.fetchErred("w2", "x", -1));
    // y goes back to w2 (the only worker with R), which fetches x anew.
    expect(t.summarize(out)).toEqual(["w2 free-keys y,x", "w2 compute-task y"]);
    expect(s.tasks.get("y")?.retries).toBe(0);
    s.validateState();
  });

  test("from a holder of the key, is not taken for a failed fetch", () => {
    const s = fetching();
    expect(s.handleStimulus(t.fetchErred("w1", "x", -1))).toEqual([]);
    expect(s.tasks.get("y")?.state).toBe("processing");
  });

  test("of an input a worker once computed itself (a stale run id) is a failed fetch too", () => {
    const s = fetching();
    const out = s.handleStimulus(t.fetchErred("w2", "x", 7));
    expect(t.summarize(out)[0]).toBe("w2 free-keys y,x");
    expect(s.tasks.get("y")?.state).toBe("erred");
  });

  test("of a key the scheduler forgot, or no longer has in memory, frees the worker's erred copy", () => {
    const s = fetching();
    expect(t.summarize(s.handleStimulus(t.fetchErred("w2", "gone", -1)))).toEqual([
      "w2 free-keys gone",
    ]);
    s.handleStimulus(t.registerWorker("w3"));
    expect(t.summarize(s.handleStimulus(t.fetchErred("w3", "y", -1)))).toEqual(["w3 free-keys y"]);
    expect(s.tasks.get("y")?.state).toBe("processing"); // on w2, untouched
    s.validateState();
  });

  test("a late failure of a worker's own old run of a key since computed elsewhere is ignored", () => {
    // w2 ran x once (run 7) and failed after the scheduler had moved on; x is in
    // memory on w1 and y, which needs it, is processing on w2: y must not fail.
    const s = fetching();
    expect(s.handleStimulus(t.taskErred("w2", "x", 7))).toEqual([]);
    expect(s.tasks.get("y")?.state).toBe("processing");
    expect(s.handleStimulus(t.taskErred("w2", "x", -1))).toEqual([]);
    expect(s.tasks.get("y")?.state).toBe("processing");
    s.validateState();
  });
});

describe("add-keys, release-worker-data, request-refresh-who-has", () => {
  test("add-keys records replicas of keys in memory and asks to drop the others", () => {
    const s = cluster("w1", "w2");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    s.handleStimulus(t.taskFinished("w1", "x", 1));
    const out = s.handleStimulus(t.fromWorker("w2", { op: "add-keys", keys: ["x", "y"] }));
    expect(t.summarize(out)).toEqual(["w2 remove-replicas y"]);
    expect(s.tasks.get("x")?.whoHas.size).toBe(2);
    expect(s.workers.get("w2")?.nbytes).toBe(100);
    s.validateState();
  });

  test("release-worker-data drops a replica; the key survives on other holders", () => {
    const s = cluster("w1", "w2");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    s.handleStimulus(t.taskFinished("w1", "x", 1));
    s.handleStimulus(t.fromWorker("w2", { op: "add-keys", keys: ["x"] }));
    const out = s.handleStimulus(t.fromWorker("w1", { op: "release-worker-data", key: "x" }));
    expect(out).toEqual([]);
    expect(s.tasks.get("x")?.state).toBe("memory");
    expect([...(s.tasks.get("x")?.whoHas ?? [])].map((w) => w.address)).toEqual(["w2"]);
    s.validateState();
  });

  test("request-refresh-who-has is answered with refresh-who-has and free-keys", () => {
    const s = cluster("w1", "w2");
    s.handleStimulus(t.updateGraph("c", { x: t.task(), y: t.task() }, ["x", "y"]));
    s.handleStimulus(t.taskFinished("w1", "x", 1));
    const out = s.handleStimulus(
      t.fromWorker("w2", { op: "request-refresh-who-has", keys: ["x", "y", "z"] }, "refresh"),
    );
    expect(out).toEqual([
      {
        to: { kind: "worker", address: "w2" },
        msg: {
          op: "refresh-who-has",
          whoHas: new Map([
            ["x", ["w1"]],
            ["y", []],
          ]),
          stimulusId: "refresh",
        },
      },
      {
        to: { kind: "worker", address: "w2" },
        msg: { op: "free-keys", keys: ["z"], stimulusId: "refresh" },
      },
    ]);
  });
});

describe("reschedule and long-running", () => {
  test("reschedule sends the task back through released to be placed again", () => {
    const s = cluster("w1");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    const out = s.handleStimulus(t.fromWorker("w1", { op: "reschedule", key: "x" }));
    expect(t.summarize(out)).toEqual(["w1 free-keys x", "w1 compute-task x"]);
    expect(s.story("x").map((e) => `${e[1]}>${e[2]}`)).toEqual([
      "released>waiting",
      "waiting>processing",
      "processing>released",
      "released>waiting",
      "waiting>processing",
    ]);
  });

  test("reschedule from a worker not processing the task is ignored", () => {
    const s = cluster("w1", "w2");
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    expect(s.handleStimulus(t.fromWorker("w2", { op: "reschedule", key: "x" }))).toEqual([]);
  });

  test("a long-running task stops counting towards occupancy and queuing slots", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"));
    // One group of 3 > 2 × 1 thread, root-ish: queued beyond w1's 2 slots.
    const tasks = { "x-1": t.task(), "x-2": t.task(), "x-3": t.task() };
    s.handleStimulus(t.updateGraph("c", tasks, ["x-1", "x-2", "x-3"]));
    expect(s.tasks.get("x-3")?.state).toBe("queued");
    const w1 = s.workers.get("w1");
    expect(w1?.occupancy).toBe(1);
    const out = s.handleStimulus(
      t.fromWorker("w1", { op: "long-running", key: "x-1", computeDuration: 2, runId: 1 }),
    );
    expect(t.summarize(out)).toEqual(["w1 compute-task x-3"]);
    expect(w1?.longRunning.size).toBe(1);
    expect(s.durations.get("f")).toBe(2);
    // x-1 no longer counts; x-2 and x-3 each at f's duration learnt from it, 2 s (as
    // Dask's occupancy, from the current averages: x-2 was assigned on the 0.5 s guess).
    expect(w1?.occupancy).toBe(4);
    s.validateState();
  });

  test("a long-running message of a stale run is ignored", () => {
    const s = cluster("w1");
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    s.handleStimulus(
      t.fromWorker("w1", { op: "long-running", key: "a", computeDuration: null, runId: 5 }),
    );
    expect(s.workers.get("w1")?.longRunning.size).toBe(0);
  });
});

describe("many stimuli at once", () => {
  test("200,000 stimuli in one call are handled (an array, not spread arguments)", () => {
    const s = cluster("w1");
    const beats = Array.from({ length: 200_000 }, (_, i) =>
      t.fromWorker("w1", { op: "heartbeat-worker" }, `beat-${i}`),
    );
    expect(s.handleStimuli(beats)).toEqual([]);
    s.validateState();
  });
});

describe("heartbeat-worker", () => {
  test("keeps what the worker says it spilled; refuses a malformed count", () => {
    const s = cluster("w1");
    const ws = s.workers.get("w1");
    expect(ws?.spilled).toBeNull();
    s.handleStimulus(t.fromWorker("w1", { op: "heartbeat-worker" }));
    expect(ws?.spilled).toBeNull();
    s.handleStimulus(
      t.fromWorker("w1", { op: "heartbeat-worker", spilled: { keys: 3, bytes: 3000 } }),
    );
    expect(ws?.spilled).toEqual({ keys: 3, bytes: 3000 });
    expect(() =>
      s.handleStimulus(
        t.fromWorker("w1", { op: "heartbeat-worker", spilled: { keys: -1, bytes: 0 } }),
      ),
    ).toThrow(/spilled must be \{keys, bytes\} counts/);
    expect(ws?.spilled).toEqual({ keys: 3, bytes: 3000 });
  });

  test("keeps the memory the worker measured; refuses one that is not a count of bytes", () => {
    const s = cluster("w1");
    const ws = s.workers.get("w1");
    expect(ws?.memory).toBeNull();
    s.handleStimulus(t.fromWorker("w1", { op: "heartbeat-worker", memory: 123_456 }));
    expect(ws?.memory).toBe(123_456);
    for (const memory of [-1, 1.5, "1kB"]) {
      expect(() =>
        s.handleStimulus(
          t.fromWorker("w1", { op: "heartbeat-worker", memory } as never as {
            op: "heartbeat-worker";
          }),
        ),
      ).toThrow(/memory must be a count of bytes/);
    }
    s.handleStimulus(t.fromWorker("w1", { op: "heartbeat-worker" }));
    expect(ws?.memory).toBe(123_456);
  });
});

// Mutant B02 (bookkeeping.ts, computeTaskMsg): `nbytes` of an input whose size
// its worker did not report sent as the raw -1 instead of defaultDataSize.
test("compute-task gives an input of unknown size the default data size, never -1", () => {
  const s = new SchedulerState({ validate: true, defaultDataSize: 4096 });
  s.handleStimulus(t.registerWorker("w1"));
  s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task(["a"]) }, ["b"]));
  // The worker could not measure a's result: task-finished with nbytes null.
  const out = s.handleStimulus(t.taskFinished("w1", "a", s.tasks.get("a")?.runId ?? -1, null));
  expect(s.tasks.get("a")?.nbytes).toBe(-1);
  const [{ msg }] = t.computeTasks(out);
  expect(msg.key).toBe("b");
  expect(new Map(msg.nbytes)).toEqual(new Map([["a", 4096]]));
  s.validateState();
});

// Mutant H01 (workerHandlers.ts, taskFinished): a task in no-worker no longer
// among the states whose task-finished is answered with free-keys (Dask's
// stimulus_task_finished: `ts.state in ("released", "queued", "no-worker")`).
test("task-finished of the current run of a task now in no-worker frees it on the worker", () => {
  const s = new SchedulerState({ validate: true });
  s.handleStimulus(t.registerWorker("w1"));
  s.handleStimulus(t.updateGraph("c", { x: t.task([], { workers: ["w1"] }) }, ["x"]));
  const runId = s.tasks.get("x")?.runId ?? -1;
  s.handleStimulus(t.fromWorker("w1", { op: "worker-status-change", status: "paused" }));
  // The task asks to run elsewhere; w1, paused, is the only worker it may run on.
  s.handleStimulus(t.fromWorker("w1", { op: "reschedule", key: "x" }));
  expect(s.tasks.get("x")?.state).toBe("no-worker");
  // The run had finished all the same (the report crossed the free-keys).
  const out = s.handleStimulus(t.taskFinished("w1", "x", runId));
  expect(t.summarize(out)).toEqual(["w1 free-keys x"]);
  expect(s.tasks.get("x")?.state).toBe("no-worker");
  expect(s.tasks.get("x")?.whoHas.size).toBe(0);
  s.validateState();
});
