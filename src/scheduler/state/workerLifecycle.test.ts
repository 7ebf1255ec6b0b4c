import { describe, expect, test } from "vitest";
import { InvalidStimulus } from "./errors.ts";
import { noWorkerReason } from "./placement.ts";
import { SchedulerState } from "./schedulerState.ts";
import type { TaskState } from "./taskState.ts";
import * as t from "./testing.ts";

function state(options: ConstructorParameters<typeof SchedulerState>[0] = {}): SchedulerState {
  return new SchedulerState({
    validate: true,
    workerSaturation: Number.POSITIVE_INFINITY,
    ...options,
  });
}

describe("register-worker", () => {
  test("records the worker; registering the same address twice is rejected unchanged", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1", 4, { GPU: 2 }));
    const w1 = s.workers.get("w1");
    expect(w1?.nthreads).toBe(4);
    expect(w1?.resources).toEqual({ GPU: 2 });
    expect(w1?.usedResources).toEqual({ GPU: 0 });
    expect(s.totalNthreads).toBe(4);
    expect(() => s.handleStimulus(t.registerWorker("w1", 2))).toThrow(InvalidStimulus);
    expect(s.workers.get("w1")).toBe(w1);
    expect(s.totalNthreads).toBe(4);
    s.validateState();
  });

  test("a name is the worker's alone while it is connected", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1", 1, {}, undefined, { name: "gpu-0" }));
    expect(s.workers.get("w1")?.name).toBe("gpu-0");
    expect(() =>
      s.handleStimulus(t.registerWorker("w2", 1, {}, undefined, { name: "gpu-0" })),
    ).toThrow('invalid register-worker: the name "gpu-0" is taken by the worker at w1');
    expect(s.workers.has("w2")).toBe(false);
    expect(() => s.handleStimulus(t.registerWorker("w2", 1, {}, undefined, { name: "" }))).toThrow(
      /name must be a non-empty string/,
    );
    // Gone, its name is free again.
    s.handleStimulus(t.removeWorker("w1"));
    s.handleStimulus(t.registerWorker("w2", 1, {}, undefined, { name: "gpu-0" }));
    expect(s.workers.get("w2")?.name).toBe("gpu-0");
    s.validateState();
  });

  test("a name is no other worker's address, nor an address another worker's name", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1", 1, {}, undefined, { name: "w9" }));
    // Named after w1's address: `retire w1` would name both.
    expect(() =>
      s.handleStimulus(t.registerWorker("w2", 1, {}, undefined, { name: "w1" })),
    ).toThrow('invalid register-worker: the name "w1" is the address of a worker');
    // At the address w1 is named by.
    expect(() => s.handleStimulus(t.registerWorker("w9"))).toThrow(
      "invalid register-worker: the address w9 is the name of the worker at w1",
    );
    expect([...s.workers.keys()]).toEqual(["w1"]);
    // A worker named after its own address is one worker either way.
    s.handleStimulus(t.registerWorker("w3", 1, {}, undefined, { name: "w3" }));
    s.validateState();
  });

  test("a registration refused for its name changes nothing, nor do the stimuli before it", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1", 1, {}, undefined, { name: "gpu-0" }));
    const count = s.stimulusCount;
    const logged = s.stimulusLog.toArray().length;
    const refused = [
      t.registerWorker("w2", 1, {}, undefined, { name: "gpu-0" }),
      t.registerWorker("w2", 1, {}, undefined, { name: "w1" }),
      t.registerWorker("gpu-0"),
    ];
    for (const registration of refused) {
      // The whole call is refused before anything is handled: the shell then handles
      // the other stimuli alone, and must not find the graph handled once already.
      expect(() =>
        s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]), registration),
      ).toThrow(InvalidStimulus);
      expect(s.tasks.size).toBe(0);
      expect(s.stimulusCount).toBe(count);
      expect(s.stimulusLog.toArray().length).toBe(logged);
    }
    // Names taken and freed earlier in the same call count.
    expect(() =>
      s.handleStimulus(
        t.registerWorker("w2", 1, {}, undefined, { name: "cpu" }),
        t.registerWorker("w3", 1, {}, undefined, { name: "cpu" }),
      ),
    ).toThrow('invalid register-worker: the name "cpu" is taken by the worker at w2');
    expect(() =>
      s.handleStimulus(
        t.registerWorker("w2", 1, {}, undefined, { name: "w3" }),
        t.registerWorker("w3"),
      ),
    ).toThrow("invalid register-worker: the address w3 is the name of the worker at w2");
    expect(() =>
      s.handleStimulus(
        t.registerWorker("w2"),
        t.registerWorker("w3", 1, {}, undefined, { name: "w2" }),
      ),
    ).toThrow('invalid register-worker: the name "w2" is the address of a worker');
    expect([...s.workers.keys()]).toEqual(["w1"]);
    s.handleStimulus(
      t.removeWorker("w1"),
      t.registerWorker("w2", 1, {}, undefined, { name: "gpu-0" }),
    );
    expect(s.workers.get("w2")?.name).toBe("gpu-0");
    s.validateState();
  });

  test("malformed registrations are rejected with the field named", () => {
    const s = state();
    expect(() => s.handleStimulus(t.registerWorker("w1", 0))).toThrow(/nthreads/);
    expect(() => s.handleStimulus(t.registerWorker("w1", 1, { GPU: -1 }))).toThrow(/GPU/);
    expect(s.workers.size).toBe(0);
  });
});

describe("remove-worker", () => {
  test("its processing tasks are rescheduled and the other workers are told", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task() }, ["a", "b"]));
    expect(s.tasks.get("a")?.processingOn?.address).toBe("w1");
    const out = s.handleStimulus(t.removeWorker("w1", false, "gone"));
    expect(t.summarize(out)).toEqual(["w2 compute-task a", "w2 remove-worker w1"]);
    expect(s.tasks.get("a")?.suspicious).toBe(1);
    expect(s.workers.has("w1")).toBe(false);
    expect(s.totalNthreads).toBe(1);
    s.validateState();
  });

  test("keys only it held are recomputed from their inputs, recursively", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(
      t.updateGraph("c", { a: t.task(), b: t.task(["a"]), c: t.task(["b"]) }, ["c"]),
    );
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    s.handleStimulus(t.taskFinished("w1", "b", 2));
    s.handleStimulus(t.taskFinished("w1", "c", 3));
    expect(s.tasks.get("a")?.state).toBe("released");
    expect(s.tasks.get("b")?.state).toBe("released");
    s.handleStimulus(t.registerWorker("w2"));
    const out = s.handleStimulus(t.removeWorker("w1"));
    expect(t.summarize(out)).toEqual([
      "client:c lost-data c",
      "w2 compute-task a",
      "w2 remove-worker w1",
    ]);
    expect(s.tasks.get("c")?.state).toBe("waiting");
    expect(s.tasks.get("b")?.state).toBe("waiting");
    s.handleStimulus(t.taskFinished("w2", "a", 4));
    s.handleStimulus(t.taskFinished("w2", "b", 5));
    const done = s.handleStimulus(t.taskFinished("w2", "c", 6));
    expect(t.summarize(done)).toContain("client:c key-in-memory c");
    s.validateState();
  });

  test("a result computed again after its worker was lost counts once in tasksDone", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(
      t.updateGraph("c", { a: t.task(), b: t.task(["a"]), c: t.task(["b"]) }, ["c"]),
    );
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    s.handleStimulus(t.taskFinished("w1", "b", 2));
    s.handleStimulus(t.taskFinished("w1", "c", 3));
    expect(s.tasksDone).toBe(3);
    s.handleStimulus(t.registerWorker("w2"));
    s.handleStimulus(t.removeWorker("w1"));
    expect(s.tasksDone).toBe(3); // c lost, a and b released: none undone
    s.handleStimulus(t.taskFinished("w2", "a", 4));
    s.handleStimulus(t.taskFinished("w2", "b", 5));
    s.handleStimulus(t.taskFinished("w2", "c", 6));
    expect(s.tasks.get("c")?.state).toBe("memory");
    expect(s.tasksDone).toBe(3);
    // A key forgotten and submitted again is a new task: it counts again.
    s.handleStimulus(t.releaseKeys("c", ["c"]));
    expect(s.tasks.size).toBe(0);
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    s.handleStimulus(t.taskFinished("w2", "a", 7));
    expect(s.tasksDone).toBe(4);
    s.validateState();
  });

  test("a task whose workers keep dying errs with KilledWorker after allowedFailures", () => {
    const s = state({ allowedFailures: 1 });
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.removeWorker("w1"));
    expect(s.tasks.get("x")?.state).toBe("no-worker");
    s.handleStimulus(t.registerWorker("w2"));
    expect(s.tasks.get("x")?.processingOn?.address).toBe("w2");
    const out = s.handleStimulus(t.removeWorker("w2"));
    expect(t.summarize(out)).toEqual(["client:c task-erred x"]);
    const msg = out[0].msg as { exceptionText: string };
    expect(msg.exceptionText).toMatch(/^KilledWorker: Attempted to run task 'x' on 2 different/);
    expect(msg.exceptionText).toContain("w2");
    expect(s.tasks.get("x")?.state).toBe("erred");
    s.validateState();
  });

  test("a lost key whose input erred meanwhile errs too, instead of staying released", () => {
    const s = state({ allowedFailures: 0 });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task(["a"]) }, ["a", "b"]));
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    s.handleStimulus(t.taskFinished("w1", "b", 2));
    // a is lost and recomputed on w1; w1 then dies with it: a errs (KilledWorker),
    // and b, lost with w1 and needing a, errs with the same blame.
    s.handleStimulus(t.fromWorker("w1", { op: "release-worker-data", key: "a" }));
    const out = s.handleStimulus(t.removeWorker("w1"));
    expect(t.summarize(out)).toEqual([
      "client:c task-erred a",
      "client:c lost-data b",
      "client:c task-erred b",
    ]);
    expect(out[2].msg).toMatchObject({ blame: "a" });
    expect(s.tasks.get("b")?.state).toBe("erred");
    expect(s.tasksDone).toBe(2); // done once each: in memory, then erred
    s.validateState();
  });

  test("an expected removal (retirement) does not count against the task", () => {
    const s = state({ allowedFailures: 0 });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    const out = s.handleStimulus(t.removeWorker("w1", true));
    expect(t.summarize(out)).toEqual(["w2 compute-task x", "w2 remove-worker w1"]);
    expect(s.tasks.get("x")?.suspicious).toBe(0);
  });

  test("losing every worker leaves ready tasks in no-worker, silently", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    expect(s.handleStimulus(t.removeWorker("w1"))).toEqual([]);
    const x = s.tasks.get("x");
    expect(x?.state).toBe("no-worker");
    expect(noWorkerReason(s, x as TaskState)).toBe("no workers are connected");
    expect(t.summarize(s.handleStimulus(t.registerWorker("w2")))).toEqual(["w2 compute-task x"]);
  });

  test("a restricted task leaves no-worker for a suitable worker, and returns when it leaves", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(
      t.updateGraph("c", { a: t.task([], { resources: { GPU: 1 } }), b: t.task(["a"]) }, ["b"]),
    );
    expect(s.tasks.get("a")?.state).toBe("no-worker");
    const out = s.handleStimulus(t.registerWorker("w2", 1, { GPU: 1 }));
    expect(t.summarize(out).filter((m) => m.startsWith("w"))).toEqual(["w2 compute-task a"]);
    s.handleStimulus(t.removeWorker("w2"));
    expect(s.tasks.get("a")?.state).toBe("no-worker");
    expect(s.tasks.get("b")?.state).toBe("waiting");
    s.validateState();
  });

  test("losing a worker re-queues its root tasks, which run best priority first", () => {
    const s = new SchedulerState({ validate: true }); // queuing on
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    const tasks: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 6; i++) tasks[`r-${i}`] = t.task();
    s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    expect(s.queued.size).toBe(2); // two slots a worker: ceil(1.1 × 1)
    const lost = [...(s.workers.get("w1")?.processing.keys() ?? [])].map((ts) => ts.key);
    s.handleStimulus(t.removeWorker("w1"));
    for (const key of lost) expect(s.tasks.get(key)?.state).toBe("queued");
    expect(s.queued.size).toBe(4);
    expect(lost).toContain("r-0");
    const done = [...(s.workers.get("w2")?.processing.keys() ?? [])][0];
    const out = s.handleStimulus(t.taskFinished("w2", done.key, done.runId));
    expect(t.computeTasks(out).map(({ msg }) => msg.key)).toEqual(["r-0"]);
    expect(s.queued.size).toBe(3);
    s.validateState();
  });

  test("removing an unknown worker changes nothing", () => {
    const s = state();
    expect(s.handleStimulus(t.removeWorker("nobody"))).toEqual([]);
  });
});

describe("worker-status-change", () => {
  test("a paused worker gets no new tasks; resuming it schedules what waited", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.fromWorker("w1", { op: "worker-status-change", status: "paused" }));
    expect(s.running.size).toBe(0);
    expect(s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]))).toEqual([]);
    const x = s.tasks.get("x");
    expect(x?.state).toBe("no-worker");
    expect(noWorkerReason(s, x as TaskState)).toBe(
      "no running workers (all 1 connected workers are paused)",
    );
    const out2 = s.handleStimulus(
      t.fromWorker("w1", { op: "worker-status-change", status: "running" }),
    );
    expect(t.summarize(out2)).toEqual(["w1 compute-task x"]);
    s.validateState();
  });

  test("a paused worker takes no queued root tasks", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.fromWorker("w1", { op: "worker-status-change", status: "paused" }));
    // One group of 3 > 2 × 1 thread (a paused worker's threads count): root-ish.
    const tasks = { "x-1": t.task(), "x-2": t.task(), "x-3": t.task() };
    s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    expect(s.queued.size).toBe(3);
    const out = s.handleStimulus(
      t.fromWorker("w1", { op: "worker-status-change", status: "running" }),
    );
    expect(t.summarize(out)).toEqual(["w1 compute-task x-1", "w1 compute-task x-2"]);
  });
});
