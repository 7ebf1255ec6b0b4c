import { describe, expect, test } from "vitest";
import { InvalidTransition } from "./errors.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";
import { ACTOR_LOST, TRANSITIONS, transitionPairs } from "./transitions.ts";

function state(options: ConstructorParameters<typeof SchedulerState>[0] = {}): SchedulerState {
  return new SchedulerState({ validate: true, ...options });
}

describe("the transition table", () => {
  test("holds exactly Dask's scheduler pairs", () => {
    const pairs = transitionPairs()
      .map(([a, b]) => `${a}>${b}`)
      .sort();
    expect(pairs).toEqual(
      [
        "released>waiting",
        "waiting>released",
        "waiting>processing",
        "waiting>no-worker",
        "waiting>queued",
        "waiting>memory",
        "queued>released",
        "queued>processing",
        "queued>erred",
        "processing>released",
        "processing>memory",
        "processing>erred",
        "no-worker>released",
        "no-worker>processing",
        "no-worker>erred",
        "released>forgotten",
        "memory>forgotten",
        "erred>released",
        "memory>released",
        "released>erred",
      ].sort(),
    );
    expect(TRANSITIONS.forgotten).toEqual({});
  });

  test("a pair outside the table without released raises InvalidTransition with the story", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"), t.updateGraph("c", { x: t.task() }, ["x"], "s1"));
    const ts = s.tasks.get("x");
    expect(ts?.state).toBe("processing");
    // released -> processing is not in the table and involves released: no fallback.
    const r = s.tasks.get("x");
    if (r === undefined) throw new Error("no task");
    r.state = "released";
    let err: unknown;
    try {
      s.transition(r, "processing");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidTransition);
    const it = err as InvalidTransition;
    expect(it.key).toBe("x");
    expect(it.start).toBe("released");
    expect(it.finish).toBe("processing");
    expect(it.story.map((e) => [e[1], e[2], e[4]])).toEqual([
      ["released", "waiting", "s1"],
      ["waiting", "processing", "s1"],
    ]);
    expect(it.message).toContain("x :: released->processing");
    expect(it.message).toContain("'s1'");
  });
});

describe("released → waiting → processing → memory", () => {
  test("a task without dependencies runs and its result is reported to the client", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    const out = s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"], "g"));
    expect(t.summarize(out)).toEqual(["w1 compute-task x"]);
    const [{ msg }] = t.computeTasks(out);
    expect(msg).toMatchObject({
      key: "x",
      runId: 1,
      whoHas: new Map(),
      nbytes: new Map(),
      priority: [-0, 1, 0],
      duration: 0.5,
      runSpec: { fn: "f", args: [] },
      resourceRestrictions: {},
      actor: false,
      annotations: {},
      spanId: null,
      stimulusId: "g",
    });
    expect(s.tasks.get("x")?.state).toBe("processing");
    const done = s.handleStimulus(t.taskFinished("w1", "x", 1, 42, "fin"));
    expect(done).toEqual([
      {
        to: { kind: "client", id: "c" },
        msg: { op: "key-in-memory", key: "x", typename: "number", stimulusId: "fin" },
      },
    ]);
    const x = s.tasks.get("x");
    expect(x?.state).toBe("memory");
    expect(x?.nbytes).toBe(42);
    expect(s.workers.get("w1")?.nbytes).toBe(42);
    expect([...(x?.whoHas ?? [])].map((w) => w.address)).toEqual(["w1"]);
    s.validateState();
  });

  test("a dependent waits for its inputs, then gets their locations in compute-task", () => {
    const s = state({ workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    const out = s.handleStimulus(
      t.updateGraph("c", { a: t.task(), b: t.task(), c: t.task(["a", "b"]) }, ["c"]),
    );
    expect(t.summarize(out)).toEqual(["w1 compute-task a", "w2 compute-task b"]);
    expect(s.tasks.get("c")?.state).toBe("waiting");
    expect([...(s.tasks.get("c")?.waitingOn ?? [])].map((d) => d.key).sort()).toEqual(["a", "b"]);
    s.handleStimulus(t.taskFinished("w1", "a", 1, 10));
    expect(s.tasks.get("c")?.state).toBe("waiting");
    const out2 = s.handleStimulus(t.taskFinished("w2", "b", 2, 1000));
    const [{ worker, msg }] = t.computeTasks(out2);
    expect(worker).toBe("w2"); // holds more of the inputs' bytes
    expect(msg.whoHas).toEqual(
      new Map([
        ["a", ["w1"]],
        ["b", ["w2"]],
      ]),
    );
    expect(msg.nbytes).toEqual(
      new Map([
        ["a", 10],
        ["b", 1000],
      ]),
    );
    const out3 = s.handleStimulus(t.taskFinished("w2", "c", 3));
    expect(t.summarize(out3).sort()).toEqual(
      ["client:c key-in-memory c", "w1 free-keys a", "w2 free-keys b"].sort(),
    );
    expect(s.tasks.get("a")?.state).toBe("released");
    expect(s.tasks.get("b")?.state).toBe("released");
    s.validateState();
  });
});

describe("inputs larger than the worker's memory", () => {
  test("a task whose inputs together exceed its worker's memoryLimit errs with MemoryError, as Dask's", () => {
    const s = state({ workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1", 1, {}, undefined, { memoryLimit: 1000 }));
    s.handleStimulus(
      t.updateGraph("c", { a: t.task(), b: t.task(), z: t.task(["a", "b"]) }, ["z"]),
    );
    s.handleStimulus(t.taskFinished("w1", "a", 1, 600), t.taskFinished("w1", "b", 2, 600));
    const z = s.tasks.get("z");
    expect(z?.state).toBe("erred");
    expect(z?.exceptionText).toBe(
      "MemoryError: Task z has 1.17 kiB worth of input dependencies, but worker w1 has memory_limit set to 0.98 kiB.",
    );
    // The worker was never sent it, nor told to drop it; nothing is left processing there.
    expect(s.workers.get("w1")?.processing.size).toBe(0);
    expect(s.workers.get("w1")?.occupancy).toBe(0);
    s.validateState();

    // Within the limit, or without one, it runs.
    const t2 = state({ workerSaturation: Number.POSITIVE_INFINITY });
    t2.handleStimulus(t.registerWorker("w1", 1, {}, undefined, { memoryLimit: 1200 }));
    t2.handleStimulus(t.registerWorker("w2"));
    t2.handleStimulus(
      t.updateGraph("c", { a: t.task(), b: t.task(), z: t.task(["a", "b"]) }, ["z"]),
    );
    const out = t2.handleStimulus(
      t.taskFinished(t2.tasks.get("a")?.processingOn?.address ?? "", "a", 1, 600),
      t.taskFinished(t2.tasks.get("b")?.processingOn?.address ?? "", "b", 2, 600),
    );
    expect(t.computeTasks(out).map((c) => c.msg.key)).toEqual(["z"]);
    expect(t2.tasks.get("z")?.state).toBe("processing");
    t2.validateState();
  });
});

describe("waiting → queued / no-worker", () => {
  test("root tasks beyond the saturation threshold wait in queued, then run as slots free", () => {
    const s = state(); // workerSaturation 1.1: ceil(1.1 × 1) = 2 slots per thread
    s.handleStimulus(t.registerWorker("w1"));
    // One group of 4 > 2 × 1 thread: root-ish.
    const tasks = { "x-1": t.task(), "x-2": t.task(), "x-3": t.task(), "x-4": t.task() };
    const out = s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    expect(t.summarize(out)).toEqual(["w1 compute-task x-1", "w1 compute-task x-2"]);
    expect(s.tasks.get("x-3")?.state).toBe("queued");
    expect(s.tasks.get("x-4")?.state).toBe("queued");
    const out2 = s.handleStimulus(t.taskFinished("w1", "x-1", 1));
    expect(t.summarize(out2)).toEqual(["client:c key-in-memory x-1", "w1 compute-task x-3"]);
    s.validateState();
  });

  test("with workerSaturation Infinity nothing is queued", () => {
    const s = state({ workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"));
    const tasks = { a: t.task(), b: t.task(), c: t.task() };
    const out = s.handleStimulus(t.updateGraph("c", tasks, ["a", "b", "c"]));
    expect(t.computeTasks(out)).toHaveLength(3);
    expect(s.queued.size).toBe(0);
  });

  test("root tasks are queued while there is no worker, and run when one registers", () => {
    const s = state();
    const out = s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    expect(out).toEqual([]);
    expect(s.tasks.get("a")?.state).toBe("queued");
    const out2 = s.handleStimulus(t.registerWorker("w1"));
    expect(t.summarize(out2)).toEqual(["w1 compute-task a"]);
  });

  test("a task needing a resource nobody has goes to no-worker and the client is told why", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1", 1, { GPU: 1 }));
    const out = s.handleStimulus(
      t.updateGraph("c", { x: t.task([], { resources: { GPU: 2 } }) }, ["x"], "g"),
    );
    expect(out).toEqual([
      {
        to: { kind: "client", id: "c" },
        msg: {
          op: "task-no-worker",
          key: "x",
          task: "x",
          reason:
            "no running worker has enough of resource 'GPU': the task needs 2, the most any running worker has is 1",
          stimulusId: "g",
        },
      },
    ]);
    expect(s.tasks.get("x")?.state).toBe("no-worker");
    expect(s.unrunnable.has(s.tasks.get("x") as never)).toBe(true);
    const out2 = s.handleStimulus(t.registerWorker("w2", 1, { GPU: 4 }));
    // The client told it could not run hears that it can now.
    expect(t.summarize(out2)).toEqual(["w2 compute-task x", "client:c task-runnable x"]);
    expect(out2[1].msg).toMatchObject({ task: "x" });
    expect(t.computeTasks(out2)[0].msg.resourceRestrictions).toEqual({ GPU: 2 });
    expect(s.workers.get("w2")?.usedResources).toEqual({ GPU: 2 });
    s.validateState();
  });

  test("the clients wanting a dependent hear about a no-worker dependency", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    const out = s.handleStimulus(
      t.updateGraph("c", { x: t.task([], { resources: { FPGA: 1 } }), y: t.task(["x"]) }, ["y"]),
    );
    expect(out).toHaveLength(1);
    expect(out[0].msg).toMatchObject({
      op: "task-no-worker",
      key: "y",
      task: "x",
      reason: "no running worker provides resource 'FPGA' (the task needs 1)",
    });
  });
  test("a client wanting both the no-worker task and its dependent hears about both", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    const out = s.handleStimulus(
      t.updateGraph("c", { x: t.task([], { resources: { FPGA: 1 } }), y: t.task(["x"]) }, [
        "x",
        "y",
      ]),
    );
    expect(t.summarize(out).sort()).toEqual([
      "client:c task-no-worker x",
      "client:c task-no-worker y",
    ]);
  });

  test("keys wanted after their input went to no-worker are reported at once", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { x: t.task([], { resources: { FPGA: 1 } }) }, ["x"]));
    // A dependent submitted later, two levels down, and the blocked key wanted by a second client.
    const out = s.handleStimulus(
      t.updateGraph("c", { y: t.task(["x"]), z: t.task(["y"]) }, ["z"]),
      t.updateGraph("d", {}, ["x"]),
    );
    expect(t.summarize(out)).toEqual(["client:c task-no-worker z", "client:d task-no-worker x"]);
    expect(out.map(({ msg }) => (msg as { task: string }).task)).toEqual(["x", "x"]);
    expect((out[0].msg as { reason: string }).reason).toBe(
      "no running worker provides resource 'FPGA' (the task needs 1)",
    );
  });
});

describe("leaving no-worker", () => {
  test("a key held up by two tasks is told about the second when the first can run", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(
      t.updateGraph(
        "c",
        {
          x: t.task([], { resources: { FPGA: 1 } }),
          w: t.task([], { resources: { GPU: 1 } }),
          y: t.task(["x", "w"]),
        },
        ["y"],
      ),
    );
    const gpu = s.handleStimulus(t.registerWorker("w2", 1, { GPU: 1 }));
    expect(t.summarize(gpu)).toEqual(["w2 compute-task w", "client:c task-no-worker y"]);
    expect(gpu[1].msg).toMatchObject({ task: "x", reason: expect.stringMatching(/FPGA/) });
    const fpga = s.handleStimulus(t.registerWorker("w3", 1, { FPGA: 1 }));
    expect(t.summarize(fpga)).toEqual(["w3 compute-task x", "client:c task-runnable y"]);
    expect(fpga[1].msg).toMatchObject({ task: "x" });
    s.validateState();
  });

  test("a key of a thousand inputs and more, one still in no-worker, is not said runnable", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w0", 2));
    const tasks: Record<string, ReturnType<typeof t.task>> = {
      tpu: t.task([], { resources: { TPU: 1 } }), // no worker will have one
    };
    const inputs = ["tpu"];
    for (let i = 0; i < 1_200; i++) {
      tasks[`gpu${i}`] = t.task([], { resources: { GPU: 1 } });
      inputs.push(`gpu${i}`);
    }
    tasks.total = t.task(inputs);
    s.handleStimulus(t.updateGraph("c", tasks, ["total"]));
    const out = s.handleStimulus(t.registerWorker("gpus", 4, { GPU: 4 }));
    const said = out.filter((m) => m.to.kind === "client").map((m) => m.msg);
    expect(said.length).toBeGreaterThan(0);
    for (const msg of said)
      expect(msg).toMatchObject({ op: "task-no-worker", key: "total", task: "tpu" });
    s.validateState();
  });

  test("every key told it was held up is told it can run, however far it is", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    const tasks: Record<string, ReturnType<typeof t.task>> = {
      x: t.task([], { resources: { GPU: 1 } }),
    };
    for (let i = 0; i < 1_500; i++) tasks[`a${i}`] = t.task(["x"]);
    s.handleStimulus(t.updateGraph("c", tasks, Object.keys(tasks)));
    // Wanted later, past the 1,000 tasks a search from x would walk.
    const told = s.handleStimulus(t.updateGraph("c", { z: t.task(["a1499"]) }, ["z"]));
    expect(t.summarize(told)).toEqual(["client:c task-no-worker z"]);
    const out = s.handleStimulus(t.registerWorker("w2", 1, { GPU: 1 }));
    const runnable = out.filter((m) => m.msg.op === "task-runnable").map((m) => m.msg);
    expect(runnable.map((m) => (m as { key: string }).key)).toContain("z");
    s.validateState();
  });

  test("a task staying in no-worker does not keep the keys told of it once released", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { x: t.task([], { resources: { GPU: 1 } }) }, ["x"]));
    for (let i = 0; i < 2_000; i++) {
      s.handleStimulus(t.updateGraph("c", { [`z${i}`]: t.task(["x"]) }, [`z${i}`]));
      s.handleStimulus(
        t.fromClient({ op: "client-releases-keys", keys: [`z${i}`], clientId: "c" }),
      );
    }
    expect(s.tasks.size).toBe(1);
    const told = s.tasks.get("x")?.noWorkerTold;
    expect(told?.size ?? 0).toBeLessThanOrEqual(129);
  });

  test("tasks waiting silently for the first worker are not reported runnable", () => {
    const s = state();
    s.handleStimulus(
      t.updateGraph("c", { a: t.task(), b: t.task(["a"], { resources: { R: 1 } }) }, ["b"]),
    );
    expect(s.tasks.get("a")?.state).toBe("queued");
    const out = s.handleStimulus(t.registerWorker("w1", 1, { R: 1 }));
    expect(t.summarize(out)).toEqual(["w1 compute-task a"]);
  });
});

describe("processing → erred and erred → released", () => {
  test("an error errs the task and its dependents, and every wanting client is told", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(
      t.updateGraph("c", { a: t.task(), b: t.task(["a"]), c: t.task(["b"]) }, ["b", "c"]),
    );
    const out = s.handleStimulus(t.taskErred("w1", "a", 1, "Error: boom", "err"));
    expect(t.summarize(out).sort()).toEqual(["client:c task-erred b", "client:c task-erred c"]);
    for (const { msg } of out) {
      expect(msg).toMatchObject({
        blame: "a",
        exceptionText: "Error: boom",
        tracebackText: "at f()",
      });
    }
    expect(s.tasks.get("a")?.state).toBe("erred");
    expect(s.tasks.get("b")?.state).toBe("erred");
    expect(s.tasks.get("c")?.state).toBe("erred");
    expect(s.tasks.get("c")?.exceptionBlame?.key).toBe("a");
    expect(s.tasksDone).toBe(3); // erred with the blame is done too
    s.validateState();
  });

  test("retries re-run the task before it errs", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task([], { retries: 1 }) }, ["a"]));
    const out = s.handleStimulus(t.taskErred("w1", "a", 1));
    expect(t.summarize(out)).toEqual(["w1 free-keys a", "w1 compute-task a"]);
    expect(t.computeTasks(out)[0].msg.runId).toBe(2);
    expect(s.tasks.get("a")?.retries).toBe(0);
    expect(s.tasksDone).toBe(0); // retried, not done
    const out2 = s.handleStimulus(t.taskErred("w1", "a", 2));
    expect(t.summarize(out2)).toEqual(["client:c task-erred a"]);
    expect(s.tasksDone).toBe(1);
    s.validateState();
  });

  test("a dependent errs with its input's blame at once: its own retries are not used", () => {
    // As Dask's _propagate_erred: waiters go straight to erred; retries are for the task's own errors.
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task(["a"], { retries: 3 }) }, ["b"]));
    const out = s.handleStimulus(t.taskErred("w1", "a", 1));
    expect(t.summarize(out)).toEqual(["client:c task-erred b"]);
    expect(out[0].msg).toMatchObject({ blame: "a" });
    expect(s.tasks.get("b")?.state).toBe("erred");
    expect(s.tasks.get("b")?.retries).toBe(3);
    s.validateState();
  });

  test("a dependent keeps waiting while its input is retried, and errs when retries run out", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(
      t.updateGraph("c", { a: t.task([], { retries: 1 }), b: t.task(["a"]) }, ["b"]),
    );
    expect(t.summarize(s.handleStimulus(t.taskErred("w1", "a", 1)))).toEqual([
      "w1 free-keys a",
      "w1 compute-task a",
    ]);
    expect(s.tasks.get("b")?.state).toBe("waiting");
    expect([...(s.tasks.get("a")?.waiters ?? [])].map((ts) => ts.key)).toEqual(["b"]);
    const out = s.handleStimulus(t.taskErred("w1", "a", 2));
    expect(t.summarize(out)).toEqual(["client:c task-erred b"]);
    expect(s.tasks.get("b")?.exceptionBlame?.key).toBe("a");
    s.validateState();
  });

  test("an erred key released by its client lives while a dependent needs it, then is forgotten", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c1", { a: t.task() }, ["a"]));
    s.handleStimulus(t.taskErred("w1", "a", 1));
    s.handleStimulus(t.updateGraph("c2", { b: t.task(["a"]) }, ["b"]));
    // Erred with a dependent: released by nobody (Dask's _client_releases_keys).
    expect(s.handleStimulus(t.releaseKeys("c1", ["a"]))).toEqual([]);
    expect(s.tasks.get("a")?.state).toBe("erred");
    expect(t.summarize(s.handleStimulus(t.releaseKeys("c2", ["b"])))).toEqual(["w1 free-keys a"]);
    expect(s.tasks.size).toBe(0);
    // Submitted anew, it is a new task and runs again.
    const out = s.handleStimulus(t.updateGraph("c1", { a: t.task() }, ["a"]));
    expect(t.summarize(out)).toEqual(["w1 compute-task a"]);
    s.validateState();
  });

  test("releasing an erred key nobody needs forgets it and frees it where it erred", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    s.handleStimulus(t.taskErred("w1", "a", 1));
    const out = s.handleStimulus(t.releaseKeys("c", ["a"], "rel"));
    expect(t.summarize(out)).toEqual(["w1 free-keys a"]);
    expect(s.tasks.has("a")).toBe(false);
    expect(s.story("a").map((e) => `${e[1]}>${e[2]}`)).toEqual([
      "released>waiting",
      "waiting>processing",
      "processing>erred",
      "erred>released",
      "released>forgotten",
    ]);
    s.validateState();
  });

  test("a new task depending on an erred one errs at once", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    s.handleStimulus(t.taskErred("w1", "a", 1));
    const out = s.handleStimulus(t.updateGraph("c", { b: t.task(["a"]), d: t.task(["b"]) }, ["d"]));
    expect(t.summarize(out)).toEqual(["client:c task-erred d"]);
    expect(s.tasks.get("b")?.state).toBe("erred");
    s.validateState();
  });

  test("the new inputs of a new task that errs at once are not computed for it", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    s.handleStimulus(t.taskErred("w1", "a", 1));
    // n is needed by z alone, which errs (a erred): n stays released. Dask
    // computes it, for nobody.
    const out = s.handleStimulus(
      t.updateGraph("c2", { n: t.task(), z: t.task(["a", "n"]) }, ["z"]),
    );
    expect(t.summarize(out)).toEqual(["client:c2 task-erred z"]);
    expect(s.tasks.get("n")?.state).toBe("released");
    s.validateState();
    // Retried, a runs again, and z's inputs with it.
    const again = s.handleStimulus(t.fromClient({ op: "retry", keys: ["z"], clientId: "c2" }));
    expect(t.summarize(again).filter((m) => m.includes("compute-task"))).toEqual([
      "w1 compute-task a",
      "w1 compute-task n",
    ]);
    s.validateState();
  });

  test("a waiter released on its way to erred keeps no blame once its input is retried", () => {
    // y needs a and x, x needs a: when a errs, y leaves x's waiters first and
    // x, needed by nobody, is released instead of erred, with a's blame set.
    // Dask leaves it set: x then runs with an error to blame, and a graph
    // built on it later would err at once.
    const s = state();
    s.handleStimulus(t.registerWorker("w1", 4));
    s.handleStimulus(
      t.updateGraph("c", { a: t.task(), x: t.task(["a"]), y: t.task(["a", "x"]) }, ["y"]),
    );
    s.handleStimulus(t.taskErred("w1", "a", s.tasks.get("a")?.runId ?? -1));
    expect(s.tasks.get("x")?.state).toBe("released");
    expect(s.tasks.get("y")?.state).toBe("erred");

    s.handleStimulus(t.fromClient({ op: "retry", keys: ["y"], clientId: "c" }));
    expect(s.tasks.get("x")?.exceptionBlame).toBe(null);
    s.handleStimulus(t.taskFinished("w1", "a", s.tasks.get("a")?.runId ?? -1));
    expect(s.tasks.get("x")?.state).toBe("processing");
    s.handleStimulus(t.taskFinished("w1", "x", s.tasks.get("x")?.runId ?? -1));
    s.handleStimulus(t.taskFinished("w1", "y", s.tasks.get("y")?.runId ?? -1));
    expect(s.tasks.get("y")?.state).toBe("memory");

    // A graph on x (released since y is done) computes it again, and z after it.
    const out = s.handleStimulus(t.updateGraph("c2", { z: t.task(["x"]) }, ["z"]));
    expect(t.summarize(out)).toEqual(["w1 compute-task a"]);
    expect(s.tasks.get("z")?.state).toBe("waiting");
    s.validateState();
  });
  test("a task released instead of erred keeps no blame: a graph on it runs once its input is fine", () => {
    // When a errs, y leaves x's waiters before x errs, and x (needed by
    // nobody but r, erred already) is released with a's blame. a is retried
    // and computed; a new graph on x must compute x, not err at once.
    const s = state();
    const run = (key: string) => s.tasks.get(key)?.runId ?? -1;
    s.handleStimulus(t.registerWorker("w1", 4));
    s.handleStimulus(
      t.updateGraph(
        "c",
        {
          a: t.task(),
          b: t.task(),
          x: t.task(["a"]),
          y: t.task(["a", "x"]),
          r: t.task(["x", "b"]),
        },
        ["a", "y", "r"],
      ),
    );
    s.handleStimulus(t.taskErred("w1", "b", run("b")));
    s.handleStimulus(t.taskErred("w1", "a", run("a")));
    expect(s.tasks.get("x")?.state).toBe("released");
    expect(s.tasks.get("x")?.exceptionBlame).toBe(null);
    s.handleStimulus(t.releaseKeys("c", ["y"]));
    s.handleStimulus(t.fromClient({ op: "retry", keys: ["a"], clientId: "c" }));
    s.handleStimulus(t.taskFinished("w1", "a", run("a")));
    expect(s.tasks.get("a")?.state).toBe("memory");

    const out = s.handleStimulus(t.updateGraph("c2", { z: t.task(["x"]) }, ["z"]));
    expect(t.summarize(out)).toEqual(["w1 compute-task x"]);
    expect(s.tasks.get("z")?.state).toBe("waiting");
    s.validateState();
  });
});

describe("queued → erred and no-worker → erred", () => {
  const args = {
    kind: "erred" as const,
    worker: null,
    exception: "x",
    traceback: null,
    exceptionText: "Error: given up",
    tracebackText: "",
  };

  test("a queued task erred directly leaves the queue and tells its client", () => {
    const s = state();
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"], "g"));
    const a = s.tasks.get("a");
    if (a === undefined) throw new Error("no a");
    expect(a.state).toBe("queued");
    s.transition(a, "erred", args);
    expect(a.state).toBe("erred");
    expect(s.queued.has(a)).toBe(false);
    expect(a.exceptionText).toBe("Error: given up");
    s.validateState();
  });

  test("a no-worker task erred directly leaves the unrunnable set and errs its waiters", () => {
    const s = state();
    s.handleStimulus(
      t.updateGraph("c", { a: t.task([], { resources: { X: 1 } }), b: t.task(["a"]) }, ["b"]),
    );
    const a = s.tasks.get("a");
    if (a === undefined) throw new Error("no a");
    expect(a.state).toBe("no-worker");
    s.transition(a, "erred", args);
    s.processRecommendations();
    expect(s.unrunnable.size).toBe(0);
    expect(s.tasks.get("b")?.state).toBe("erred");
    expect(s.tasks.get("b")?.exceptionBlame).toBe(a);
    s.validateState();
  });
});

describe("memory → released / forgotten", () => {
  test("releasing a wanted key forgets it and frees it on its workers", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    const out = s.handleStimulus(t.releaseKeys("c", ["a"]));
    expect(t.summarize(out)).toEqual(["w1 free-keys a"]);
    expect(s.tasks.size).toBe(0);
    expect(s.workers.get("w1")?.hasWhat.size).toBe(0);
    expect(s.clients.get("c")?.wantsWhat.size).toBe(0);
    s.validateState();
  });

  test("losing the only replica of a wanted key recomputes it (lost-data to the client)", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    const out = s.handleStimulus(t.fromWorker("w1", { op: "release-worker-data", key: "a" }));
    expect(t.summarize(out)[0]).toBe("client:c lost-data a");
    expect(t.summarize(out)[1]).toMatch(/^w\d compute-task a$/);
    expect(out).toHaveLength(2);
    s.validateState();
  });

  test("waiting → memory (a stale finish after the task was sent back) changes nothing", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task(["a"]) }, ["b"]));
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    const b = s.tasks.get("b");
    expect(b?.state).toBe("processing");
    expect(b?.runId).toBe(2);
    // The worker drops a, b's only input: b goes back to waiting, a is recomputed.
    const out = s.handleStimulus(t.fromWorker("w1", { op: "release-worker-data", key: "a" }));
    expect(t.summarize(out)).toEqual(["w1 free-keys b", "w1 compute-task a"]);
    expect(b?.state).toBe("waiting");
    // b's old run finishes anyway: waiting → memory, a no-op.
    const out2 = s.handleStimulus(t.taskFinished("w1", "b", 2, 100, "late"));
    expect(out2).toEqual([]);
    expect(b?.state).toBe("waiting");
    expect(s.story("late").map((e) => e.slice(0, 3))).toEqual([["b", "waiting", "waiting"]]);
    s.validateState();
  });
});

/** The keys of the actors `address` counts (`WorkerInfo.actors`), sorted. */
function actorsOn(s: SchedulerState, address: string): string[] {
  return [...(s.workers.get(address)?.actors ?? [])].map((ts) => ts.key).sort();
}

describe("actors: the workers they live on (WorkerInfo.actors)", () => {
  test("an actor counts on its worker while it runs there and once it is in memory there", () => {
    const s = state({ workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(
      t.updateGraph("c", { a: t.task([], { actor: true }), x: t.task() }, ["a", "x"]),
    );
    const a = s.tasks.get("a");
    const home = a?.processingOn?.address as string;
    expect(actorsOn(s, home)).toEqual(["a"]);
    s.handleStimulus(t.taskFinished(home, "a", a?.runId as number));
    expect(a?.state).toBe("memory");
    expect(actorsOn(s, home)).toEqual(["a"]);
    // x, not an actor, counts nowhere.
    const x = s.tasks.get("x");
    s.handleStimulus(t.taskFinished(x?.processingOn?.address as string, "x", x?.runId as number));
    expect(actorsOn(s, "w1").concat(actorsOn(s, "w2"))).toEqual(["a"]);
    s.validateState();
  });

  test("a worker holding a handle it fetched (add-keys) does not count the actor", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(t.updateGraph("c", { a: t.task([], { actor: true }) }, ["a"]));
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    // A task on w2 needed it: w2 fetched its handle and says so.
    s.handleStimulus(t.fromWorker("w2", { op: "add-keys", keys: ["a"] }));
    const a = s.tasks.get("a");
    expect([...(a?.whoHas ?? [])].map((ws) => ws.address).sort()).toEqual(["w1", "w2"]);
    expect(actorsOn(s, "w1")).toEqual(["a"]);
    expect(actorsOn(s, "w2")).toEqual([]);
    s.validateState();
    // The handle goes: the actor stays where it lives.
    s.handleStimulus(t.fromWorker("w2", { op: "release-worker-data", key: "a" }));
    expect(a?.state).toBe("memory");
    expect(actorsOn(s, "w1")).toEqual(["a"]);
    s.validateState();
  });

  test("an actor leaves its worker's count when it is released, rescheduled or forgotten", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(
      t.updateGraph(
        "c",
        { a: t.task([], { actor: true }), b: t.task(["a"]), r: t.task([], { actor: true }) },
        ["b", "r"],
      ),
    );
    expect(actorsOn(s, "w1")).toEqual(["a", "r"]);
    // processing → released (the task asked to run elsewhere), then back.
    s.handleStimulus(t.fromWorker("w1", { op: "reschedule", key: "r" }));
    const r = s.tasks.get("r");
    expect(r?.state).toBe("processing");
    expect(r?.runId).toBe(3);
    expect(actorsOn(s, "w1")).toEqual(["a", "r"]);
    // processing → released for good: its client lets it go.
    s.handleStimulus(t.releaseKeys("c", ["r"]));
    expect(r?.state).toBe("forgotten");
    expect(actorsOn(s, "w1")).toEqual(["a"]);
    // a reaches memory, feeds b, and is released once b is done (memory → released).
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    expect(actorsOn(s, "w1")).toEqual(["a"]);
    s.handleStimulus(t.taskFinished("w1", "b", s.tasks.get("b")?.runId as number));
    expect(s.tasks.get("a")?.state).toBe("released");
    expect(actorsOn(s, "w1")).toEqual([]);
    s.validateState();
    // memory → forgotten.
    s.handleStimulus(t.updateGraph("c", { f: t.task([], { actor: true }) }, ["f"]));
    s.handleStimulus(t.taskFinished("w1", "f", s.tasks.get("f")?.runId as number));
    expect(actorsOn(s, "w1")).toEqual(["f"]);
    s.handleStimulus(t.releaseKeys("c", ["f"]));
    expect(s.tasks.has("f")).toBe(false);
    expect(actorsOn(s, "w1")).toEqual([]);
    s.validateState();
  });

  test("an actor processing on a worker that leaves is counted where it runs next", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task([], { actor: true }) }, ["a"]));
    s.handleStimulus(t.registerWorker("w2"));
    const w1 = s.workers.get("w1");
    expect(actorsOn(s, "w1")).toEqual(["a"]);
    s.handleStimulus(t.removeWorker("w1"));
    expect(w1?.actors.size).toBe(0);
    expect(s.tasks.get("a")?.processingOn?.address).toBe("w2");
    expect(actorsOn(s, "w2")).toEqual(["a"]);
    s.validateState();
  });
});

/** Report `key`, processing somewhere, finished (100 bytes). */
function finish(s: SchedulerState, key: string): void {
  const ts = s.tasks.get(key);
  if (ts?.processingOn == null) throw new Error(`${key} is not processing`);
  s.handleStimulus(t.taskFinished(ts.processingOn.address, key, ts.runId));
}

describe("actors: losing the worker an actor lives on", () => {
  /**
   * w1 runs the actor `a` and `slow`; once `a` is in memory its dependent `b`
   * runs on w2, which fetched a handle to `a` (add-keys); `c` needs `a` and
   * waits for `slow`. The client wants `a`, `b` and `c`.
   */
  function actorWithDependents(): SchedulerState {
    const s = state({ workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(
      t.updateGraph(
        "c",
        {
          a: t.task([], { actor: true }),
          slow: t.task(),
          b: t.task(["a"]),
          c: t.task(["a", "slow"]),
        },
        ["a", "b", "c"],
      ),
    );
    s.handleStimulus(t.registerWorker("w2"));
    finish(s, "a");
    expect(s.tasks.get("b")?.processingOn?.address).toBe("w2");
    s.handleStimulus(t.fromWorker("w2", { op: "add-keys", keys: ["a"] }));
    expect(s.tasks.get("c")?.state).toBe("waiting");
    return s;
  }

  test("a wanted actor errs with ACTOR_LOST, not computed again, and its dependents err", () => {
    const s = actorWithDependents();
    const out = s.handleStimulus(t.removeWorker("w1", false, "lost"));
    const summary = t.summarize(out);
    expect(summary).toContain("w2 free-keys a,b");
    for (const key of ["a", "b", "c"]) expect(summary).toContain(`client:c task-erred ${key}`);
    expect(summary.filter((m) => / (lost-data|compute-task) a$/.test(m))).toEqual([]);
    const erred = out.filter(({ msg }) => msg.op === "task-erred").map(({ msg }) => msg);
    for (const msg of erred) {
      expect(msg).toMatchObject({
        blame: "a",
        exception: { name: "RuntimeError", message: ACTOR_LOST },
        exceptionText: `RuntimeError: ${ACTOR_LOST}`,
        stimulusId: "lost",
      });
    }
    for (const key of ["a", "b", "c"]) expect(s.tasks.get(key)?.state).toBe("erred");
    expect(s.tasks.get("b")?.processingOn).toBe(null);
    expect(s.workers.get("w2")?.actors.size).toBe(0);
    expect(ACTOR_LOST).toBe("Worker holding Actor was lost");
    s.validateState();
  });

  test("an actor its worker drops is lost, though another worker holds a handle to it", () => {
    const s = actorWithDependents();
    const out = s.handleStimulus(t.fromWorker("w1", { op: "release-worker-data", key: "a" }));
    expect(t.summarize(out)).toContain("client:c task-erred a");
    expect(t.summarize(out)).toContain("w2 free-keys a,b");
    expect(s.tasks.get("a")?.state).toBe("erred");
    expect(s.tasks.get("a")?.whoHas.size).toBe(0);
    s.validateState();
    // Losing a handle is losing a replica: the actor stays.
    const t2 = actorWithDependents();
    t2.handleStimulus(t.removeWorker("w2"));
    expect(t2.tasks.get("a")?.state).toBe("memory");
    expect(t2.workers.get("w1")?.actors.has(t2.tasks.get("a") as never)).toBe(true);
    t2.validateState();
  });

  test("a lost actor leaves a released dependent nobody wants released, not computed after a retry", () => {
    // m, computed from the actor a, was released once z (needing it) was done.
    const s = state();
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(
      t.updateGraph("c", { a: t.task([], { actor: true }), m: t.task(["a"]), z: t.task(["m"]) }, [
        "a",
        "z",
      ]),
    );
    for (const key of ["a", "m", "z"]) finish(s, key);
    expect(s.tasks.get("m")?.state).toBe("released");
    const out = s.handleStimulus(t.fromWorker("w1", { op: "release-worker-data", key: "a" }));
    expect(t.summarize(out)).toEqual(["client:c task-erred a"]);
    // Dask errs m too; retried with a, it would then be computed for nobody.
    expect(s.tasks.get("m")?.state).toBe("released");
    const again = s.handleStimulus(t.fromClient({ op: "retry", keys: ["a"], clientId: "c" }));
    expect(t.summarize(again)).toEqual(["client:c task-retried a", "w1 compute-task a"]);
    s.validateState();
  });

  test("an actor nobody wants is computed again for the tasks waiting on it", () => {
    const s = state({ workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(
      t.updateGraph(
        "c",
        { a: t.task([], { actor: true }), slow: t.task(), b: t.task(["a", "slow"]) },
        ["b"],
      ),
    );
    finish(s, "a");
    s.handleStimulus(t.registerWorker("w2"));
    const out = s.handleStimulus(t.removeWorker("w1"));
    expect(t.summarize(out)).toEqual(
      expect.arrayContaining(["w2 compute-task a", "w2 compute-task slow"]),
    );
    expect(out.some(({ msg }) => msg.op === "task-erred")).toBe(false);
    expect(s.workers.get("w2")?.actors.has(s.tasks.get("a") as never)).toBe(true);
    s.validateState();
  });

  test("an actor its client let go is forgotten, and its worker's loss changes nothing", () => {
    const s = state();
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(t.updateGraph("c", { a: t.task([], { actor: true }) }, ["a"]));
    const home = s.tasks.get("a")?.processingOn?.address as string;
    finish(s, "a");
    const out = s.handleStimulus(t.releaseKeys("c", ["a"]));
    expect(t.summarize(out)).toEqual([`${home} free-keys a`]);
    expect(s.tasks.has("a")).toBe(false);
    expect(s.workers.get(home)?.actors.size).toBe(0);
    expect(s.handleStimulus(t.removeWorker(home))).toEqual([
      { to: expect.anything(), msg: expect.objectContaining({ op: "remove-worker" }) },
    ]);
    s.validateState();
  });
});

// Mutant T03 (transitions.ts, releasedWaiting, erred-input branch): releasing
// the task's inputs that nothing waits for even when a client wants them.
test("a task that errs on its way back to waiting leaves an input its client wants running", () => {
  const s = new SchedulerState({ validate: true });
  const run = (key: string) => s.tasks.get(key)?.runId ?? -1;
  const on = (key: string) => s.tasks.get(key)?.processingOn?.address ?? "";
  s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"), t.registerWorker("w3"));
  // c wants y and its input d; e and y run on w1, d on w2 or w3.
  s.handleStimulus(
    t.updateGraph(
      "c",
      {
        d: t.task([], { workers: ["w2", "w3"] }),
        e: t.task([], { workers: ["w1"] }),
        y: t.task(["d", "e"], { workers: ["w1"] }),
      },
      ["y", "d"],
    ),
  );
  const dHome = on("d");
  s.handleStimulus(t.taskFinished(dHome, "d", run("d")));
  s.handleStimulus(t.taskFinished("w1", "e", run("e")));
  s.handleStimulus(t.taskFinished("w1", "y", run("y")));
  expect(s.tasks.get("e")?.state).toBe("released");
  // e is computed again for another client's z, and fails.
  s.handleStimulus(t.updateGraph("c2", { z: t.task(["e"], { workers: ["w1"] }) }, ["z"]));
  s.handleStimulus(t.taskErred("w1", "e", run("e")));
  expect(s.tasks.get("e")?.state).toBe("erred");
  // d's holder leaves: d (wanted by c) is computed again on the other worker.
  s.handleStimulus(t.removeWorker(dHome, true));
  expect(s.tasks.get("d")?.state).toBe("processing");
  const dRun = run("d");
  const dNow = on("d");
  // y's holder leaves: y, wanted, goes back to waiting and errs (its input e
  // is erred). d is still wanted by c: it keeps running where it is.
  const out = s.handleStimulus(t.removeWorker("w1", true));
  expect(s.tasks.get("y")?.state).toBe("erred");
  expect(t.summarize(out).filter((m) => m.startsWith(`${dNow} `) && m.endsWith(" d"))).toEqual([]);
  expect(s.tasks.get("d")?.state).toBe("processing");
  expect(run("d")).toBe(dRun);
  s.validateState();
});
