import { describe, expect, test } from "vitest";
import type { GraphTask } from "../../protocol/messages.ts";
import { taskRef } from "../../protocol/messagesTaskSpec.ts";
import type { SchedulerEvent } from "./events.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

function cluster(): SchedulerState {
  const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
  s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
  return s;
}

describe("update-graph", () => {
  test("priorities are (-user priority, generation, graph order), dependencies first", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(
      t.updateGraph(
        "c",
        { z: t.task(["y", "x"], { priority: 2 }), y: t.task(), x: t.task(), w: t.task() },
        ["z", "w"],
      ),
    );
    const p = (k: string) => s.tasks.get(k)?.priority;
    expect(p("y")).toEqual([-0, 1, 0]);
    expect(p("x")).toEqual([-0, 1, 1]);
    expect(p("z")).toEqual([-2, 1, 2]);
    expect(p("w")).toEqual([-0, 1, 3]);
    s.handleStimulus(t.updateGraph("c", { v: t.task() }, ["v"]));
    expect(p("v")).toEqual([-0, 2, 0]);
  });

  test("tasks the wanted keys do not need are not created", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task(), unused: t.task() }, ["a"]));
    expect([...s.tasks.keys()]).toEqual(["a"]);
  });

  test("a malformed graph changes nothing; every wanted key gets task-erred", () => {
    const s = cluster();
    const bad = { spec: { fn: "f", args: [taskRef("b")] }, dependencies: [] };
    const out = s.handleStimulus(t.updateGraph("c", { a: bad, b: t.task() }, ["a", "b"], "g"));
    expect(s.tasks.size).toBe(0);
    expect(t.summarize(out)).toEqual(["client:c task-erred a", "client:c task-erred b"]);
    expect(out[0].msg).toMatchObject({
      exceptionText:
        "InvalidGraph: update-graph rejected: task 'a' refers to 'b' in its arguments but does not list it as a dependency",
      stimulusId: "g",
    });
  });

  test("a task that throws when read is a malformed one, not a failure of the machine", () => {
    const s = cluster();
    const spec = {
      get spec(): never {
        throw new Error("boom");
      },
      dependencies: [],
    };
    const args = {
      spec: {
        fn: "f",
        args: [
          {
            get x(): never {
              throw new TypeError("deep");
            },
          },
        ],
      },
      dependencies: [],
    };
    const deps = {
      spec: { fn: "f", args: [] },
      get dependencies(): never {
        throw new Error("deps");
      },
    };
    const proxy = new Proxy(
      {},
      {
        get() {
          throw new Error("proxy");
        },
      },
    );
    const cases: [GraphTask, string][] = [
      [spec as never, "task 'a' cannot be read: Error: boom"],
      [args as never, "task 'a' cannot be read: TypeError: deep"],
      [deps as never, "task 'a' cannot be read: Error: deps"],
      [proxy as never, "task 'a' cannot be read: Error: proxy"],
    ];
    for (const [hostile, why] of cases) {
      const out = s.handleStimulus(t.updateGraph("c", { a: hostile, b: t.task(["a"]) }, ["b"]));
      expect(s.tasks.size).toBe(0);
      expect(out.map((m) => (m.msg as { exceptionText?: string }).exceptionText)).toEqual([
        `InvalidGraph: update-graph rejected: ${why}`,
      ]);
    }
    s.validateState();
  });

  test("arguments nested too deeply to reach a worker are rejected", () => {
    const s = cluster();
    let deep: unknown = 1;
    for (let i = 0; i < 1_900; i++) deep = [deep];
    const bad = { spec: { fn: "f", args: [deep] }, dependencies: [] };
    const out = s.handleStimulus(t.updateGraph("c", { a: bad }, ["a"]));
    expect(s.tasks.size).toBe(0);
    expect((out[0].msg as { exceptionText: string }).exceptionText).toBe(
      "InvalidGraph: update-graph rejected: task 'a' has arguments nested deeper than 1000 arrays, objects, Maps or Sets",
    );
  });

  test("an empty key is rejected (workers would refuse to report it)", () => {
    const s = cluster();
    const out = s.handleStimulus(t.updateGraph("c", { "": t.task() }, [""]));
    expect(s.tasks.size).toBe(0);
    expect((out[0].msg as { exceptionText: string }).exceptionText).toBe(
      "InvalidGraph: update-graph rejected: a task key must be a non-empty string",
    );
  });

  test("a cycle is rejected, naming it", () => {
    const s = cluster();
    const out = s.handleStimulus(
      t.updateGraph("c", { a: t.task(["b"]), b: t.task(["c"]), c: t.task(["a"]) }, ["a"]),
    );
    expect(s.tasks.size).toBe(0);
    expect((out[0].msg as { exceptionText: string }).exceptionText).toBe(
      "InvalidGraph: update-graph rejected: cycle: a → b → c → a",
    );
  });

  test("a long cycle is named by a few of its keys, not all of them", () => {
    const s = cluster();
    const tasks: Record<string, ReturnType<typeof t.task>> = { x0: t.task(["x4999"]) };
    for (let i = 1; i < 5000; i++) tasks[`x${i}`] = t.task([`x${i - 1}`]);
    const out = s.handleStimulus(t.updateGraph("c", tasks, ["x4999"]));
    expect((out[0].msg as { exceptionText: string }).exceptionText).toBe(
      "InvalidGraph: update-graph rejected: cycle: x4999 → x4998 → x4997 → x4996 → x4995 → x4994 → x4993 → x4992 → … (4,991 more) … → x0 → x4999",
    );
  });

  test("malformed entries are named", () => {
    const s = cluster();
    const tasks = {
      a: { spec: { fn: "", args: [] }, dependencies: [] },
      b: { spec: { fn: "f", args: [] }, dependencies: [], retries: -1 },
      c: { spec: { fn: "f", args: [] }, dependencies: ["c"] },
    };
    const out = s.handleStimulus(t.updateGraph("c", tasks, ["a", "b", "c"]));
    const text = (out[0].msg as { exceptionText: string }).exceptionText;
    expect(text).toContain("task 'a': spec.fn must be a non-empty string");
    expect(text).toContain("task 'b': retries must be an integer ≥ 0");
    expect(text).toContain("task 'c' depends on itself");
  });

  test("a task marked actor is an actor, told so in compute-task; a non-boolean mark is refused", () => {
    const s = cluster();
    const out = s.handleStimulus(
      t.updateGraph("c", { a: t.task([], { actor: true }), b: t.task() }, ["a", "b"]),
    );
    expect(s.tasks.get("a")?.actor).toBe(true);
    expect(s.tasks.get("b")?.actor).toBe(false);
    const actorOf = new Map(t.computeTasks(out).map(({ msg }) => [msg.key, msg.actor]));
    expect(actorOf).toEqual(
      new Map([
        ["a", true],
        ["b", false],
      ]),
    );

    const bad = s.handleStimulus(
      t.updateGraph("c", { x: t.task([], { actor: "yes" as unknown as boolean }) }, ["x"]),
    );
    expect(s.tasks.has("x")).toBe(false);
    expect((bad[0].msg as { exceptionText: string }).exceptionText).toBe(
      "InvalidGraph: update-graph rejected: task 'x': actor must be a boolean",
    );
  });

  test("wanted keys needing unknown keys are cancelled; the rest runs", () => {
    const s = cluster();
    const out = s.handleStimulus(
      t.updateGraph("c", { a: t.task(["ghost"]), b: t.task(["a"]), ok: t.task() }, ["b", "ok"]),
    );
    expect(t.summarize(out)).toEqual(["client:c cancelled-keys b", "w1 compute-task ok"]);
    expect(out[0].msg).toMatchObject({ reason: "lost dependencies: ghost unknown" });
    expect([...s.tasks.keys()]).toEqual(["ok"]);
    s.validateState();
  });

  test("new tasks only cancelled keys need are not created (they would never be released)", () => {
    const s = cluster();
    const tasks = {
      a: t.task(),
      b: t.task(["a", "ghost"]),
      c: t.task(["shared"]),
      shared: t.task(),
    };
    const out = s.handleStimulus(t.updateGraph("c", tasks, ["b", "c"]));
    expect(t.summarize(out)).toEqual(["client:c cancelled-keys b", "w1 compute-task shared"]);
    expect([...s.tasks.keys()].sort()).toEqual(["c", "shared"]);
    s.validateState();
  });

  test("a graph may build on known keys; those in memory are reported at once", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    const out = s.handleStimulus(t.updateGraph("d", { b: t.task(["a"]) }, ["a", "b"]));
    expect(t.summarize(out)).toEqual(["client:d key-in-memory a", "w1 compute-task b"]);
    expect(t.computeTasks(out)[0].msg.whoHas).toEqual(new Map([["a", ["w1"]]]));
    expect(s.tasks.get("a")?.whoWants.size).toBe(2);
    s.validateState();
  });

  test("a released input is computed again for a new dependent", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task(["a"]) }, ["b"]));
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    s.handleStimulus(t.taskFinished("w1", "b", 2));
    expect(s.tasks.get("a")?.state).toBe("released");
    const out = s.handleStimulus(t.updateGraph("c", { c: t.task(["a"]) }, ["c"]));
    expect(t.summarize(out)).toEqual([expect.stringMatching(/^w\d compute-task a$/)]);
    expect(s.tasks.get("c")?.state).toBe("waiting");
    s.validateState();
  });

  test("annotations, retries and resources reach compute-task", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1", 1, { GPU: 1 }));
    const out = s.handleStimulus(
      t.updateGraph(
        "c",
        { a: t.task([], { annotations: { team: "x" }, retries: 2, resources: { GPU: 1 } }) },
        ["a"],
      ),
    );
    expect(t.computeTasks(out)[0].msg).toMatchObject({
      annotations: { team: "x" },
      resourceRestrictions: { GPU: 1 },
    });
    expect(s.tasks.get("a")?.retries).toBe(2);
  });
});

describe("client-releases-keys, client-desires-keys, close-client", () => {
  test("releasing a key frees its inputs only once no one needs them", () => {
    const s = cluster();
    s.handleStimulus(
      t.updateGraph("c", { a: t.task(), b: t.task(["a"]), d: t.task(["a"]) }, ["b", "d"]),
    );
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    expect(s.tasks.get("a")?.state).toBe("memory");
    // b is processing; releasing d (also processing) keeps a for b.
    const dWorker = s.tasks.get("d")?.processingOn?.address;
    const out = s.handleStimulus(t.releaseKeys("c", ["d"]));
    expect(t.summarize(out)).toEqual([`${dWorker} free-keys d`]);
    expect(s.tasks.has("d")).toBe(false);
    expect(s.tasks.get("a")?.state).toBe("memory");
    const out2 = s.handleStimulus(t.releaseKeys("c", ["b"]));
    const bWorker = "w1"; // a is on w1
    // One message: a free-keys joins the one the same stimulus just queued for that worker.
    expect(t.summarize(out2)).toEqual([`${bWorker} free-keys b,a`]);
    expect(s.tasks.size).toBe(0);
    s.validateState();
  });

  test("a key wanted by two clients survives one releasing it", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c1", { a: t.task() }, ["a"]));
    s.handleStimulus(t.updateGraph("c2", {}, ["a"]));
    s.handleStimulus(t.releaseKeys("c1", ["a"]));
    expect(s.tasks.get("a")?.state).toBe("processing");
    const out = s.handleStimulus(t.taskFinished("w1", "a", 1));
    expect(t.summarize(out)).toEqual(["client:c2 key-in-memory a"]);
  });

  test("client-desires-keys reports known outcomes and cancels unknown keys", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task() }, ["a"]));
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    const out = s.handleStimulus(
      t.fromClient({ op: "client-desires-keys", keys: ["a", "zz"], clientId: "d" }),
    );
    expect(t.summarize(out)).toEqual(["client:d key-in-memory a", "client:d cancelled-keys zz"]);
  });

  test("wanting again a released key whose input erred reports it erred", () => {
    const s = cluster();
    s.handleStimulus(
      t.updateGraph("c", { a: t.task(), b: t.task(["a"]), d: t.task(["a", "b"]) }, ["d"]),
    );
    s.handleStimulus(t.taskErred("w1", "a", 1));
    // b was waiting for a, but d's release let it go back to released.
    expect(s.tasks.get("b")?.state).toBe("released");
    const out = s.handleStimulus(
      t.fromClient({ op: "client-desires-keys", keys: ["b"], clientId: "e" }),
    );
    expect(t.summarize(out)).toEqual(["client:e task-erred b"]);
    expect(out[0].msg).toMatchObject({ blame: "a", exceptionText: "Error: boom" });
    s.validateState();
  });

  test("close-client releases everything the client wanted", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task() }, ["a", "b"]));
    const out = s.handleStimulus(t.fromClient({ op: "close-client", clientId: "c" }));
    expect(t.summarize(out).sort()).toEqual(["w1 free-keys a", "w2 free-keys b"]);
    expect(s.tasks.size).toBe(0);
    expect(s.clients.size).toBe(0);
    s.validateState();
  });
});

describe("cancel-keys", () => {
  test("cancels the key and its dependents wanted by this client alone", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task(["a"]) }, ["a", "b"]));
    const out = s.handleStimulus(t.cancelKeys("c", ["a"], false, "cx"));
    expect(t.summarize(out)).toEqual(["w1 free-keys a", "client:c cancelled-keys a,b"]);
    expect(out[1].msg).toMatchObject({ reason: "cancelled by client c", stimulusId: "cx" });
    expect(s.tasks.size).toBe(0);
    s.validateState();
  });

  test("a key another client wants is cancelled for the requester alone, unless forced", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c1", { a: t.task() }, ["a"]));
    s.handleStimulus(t.updateGraph("c2", {}, ["a"]));
    const mine = s.handleStimulus(t.cancelKeys("c1", ["a"]));
    expect(t.summarize(mine)).toEqual(["client:c1 cancelled-keys a"]);
    expect([...(s.tasks.get("a")?.whoWants ?? [])].map((c) => c.id)).toEqual(["c2"]);
    s.handleStimulus(t.updateGraph("c1", {}, ["a"]));
    const out = s.handleStimulus(t.cancelKeys("c1", ["a"], true));
    expect(t.summarize(out)).toEqual([
      "w1 free-keys a",
      "client:c1 cancelled-keys a",
      "client:c2 cancelled-keys a",
    ]);
    expect(s.tasks.size).toBe(0);
    s.validateState();
  });

  test("a cancel notice says which of the client's submissions it follows", () => {
    const s = cluster();
    const submit = (
      clientId: string,
      tasks: Record<string, GraphTask>,
      submission: number,
    ): SchedulerEvent => ({
      kind: "client-message",
      msg: {
        op: "update-graph",
        tasks: new Map(Object.entries(tasks)),
        keys: Object.keys(tasks),
        clientId,
        stimulusId: `update-graph-${clientId}-${submission}`,
        submission,
      },
    });
    s.handleStimulus(submit("c1", { a: t.task() }, 1), submit("c2", { a: t.task() }, 7));
    const out = s.handleStimulus(t.cancelKeys("c1", ["a"], true));
    expect(out.filter((m) => m.to.kind === "client").map((m) => m.msg)).toMatchObject([
      { op: "cancelled-keys", keys: ["a"], submission: 1 },
      { op: "cancelled-keys", keys: ["a"], submission: 7 },
    ]);
    // Not a non-negative integer: refused before anything changes.
    expect(() => s.handleStimulus(submit("c2", { b: t.task() }, -1))).toThrow(
      /submission must be a non-negative integer/,
    );
  });

  test("the requester is answered even when nothing was cancelled", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c1", { a: t.task() }, ["a"]));
    s.handleStimulus(t.updateGraph("c2", {}, []));
    const out = s.handleStimulus(t.cancelKeys("c2", ["a", "zz"], false, "c2x"));
    expect(t.summarize(out)).toEqual(["client:c2 cancelled-keys"]);
    expect(out[0].msg).toMatchObject({ keys: [], stimulusId: "c2x" });
    expect(s.tasks.get("a")?.whoWants.size).toBe(1);
    // A client that never submitted anything is answered too.
    const fresh = s.handleStimulus(t.cancelKeys("c3", ["a"], false, "c3x"));
    expect(t.summarize(fresh)).toEqual(["client:c3 cancelled-keys"]);
    s.validateState();
  });

  test("only the clients that wanted a cancelled key are told", () => {
    const s = cluster();
    s.handleStimulus(t.updateGraph("c1", { a: t.task(), b: t.task() }, ["a", "b"]));
    s.handleStimulus(t.updateGraph("c2", {}, ["b"]), t.updateGraph("c3", {}, []));
    expect(t.summarize(s.handleStimulus(t.cancelKeys("c1", ["a"])))).toEqual([
      "w1 free-keys a",
      "client:c1 cancelled-keys a",
    ]);
    // Forced: c2 loses b (and only b is named to it); c3 wanted neither and hears nothing.
    const out = s.handleStimulus(t.cancelKeys("c1", ["b"], true));
    expect(t.summarize(out).slice(1)).toEqual([
      "client:c1 cancelled-keys b",
      "client:c2 cancelled-keys b",
    ]);
    expect(s.tasks.size).toBe(0);
    s.validateState();
  });
});

describe("retry", () => {
  test("sends the failed input back to be computed, and the keys that failed through it after it", () => {
    const s = cluster();
    s.handleStimulus(
      t.updateGraph("c", { a: t.task(), b: t.task(["a"]), x: t.task() }, ["b", "x"]),
    );
    const runOfA = s.tasks.get("a")?.processingOn?.address as string;
    s.handleStimulus(t.taskErred(runOfA, "a", 1));
    s.handleStimulus(t.taskFinished(s.tasks.get("x")?.processingOn?.address as string, "x", 2));
    expect(s.tasks.get("b")?.state).toBe("erred");
    const out = s.handleStimulus(
      t.fromClient({ op: "retry", keys: ["b", "x", "unknown"], clientId: "c" }),
    );
    // a is computed again; b waits on it; x, in memory, and the unknown key stay as they were.
    expect(s.tasks.get("a")?.state).toBe("processing");
    expect(s.tasks.get("b")?.state).toBe("waiting");
    expect(s.tasks.get("x")?.state).toBe("memory");
    const summary = t.summarize(out);
    expect(summary).toContain("client:c task-retried b");
    expect(summary.some((m) => m.endsWith("compute-task a"))).toBe(true);
    expect(s.tasks.get("a")?.exceptionBlame).toBeNull();
    s.validateState();
    // This time it works.
    s.handleStimulus(t.taskFinished(s.tasks.get("a")?.processingOn?.address as string, "a", 3));
    s.handleStimulus(t.taskFinished(s.tasks.get("b")?.processingOn?.address as string, "b", 4));
    expect(s.tasks.get("b")?.state).toBe("memory");
    s.validateState();
  });

  test("a malformed retry is refused", () => {
    const s = cluster();
    expect(() => s.handleStimulus(t.fromClient({ op: "retry", keys: "a", clientId: "c" }))).toThrow(
      /keys/,
    );
  });
});

function oneWorkerTwoThreads(): SchedulerState {
  const s = new SchedulerState({ validate: true });
  s.handleStimulus(t.registerWorker("w1", 2));
  return s;
}

// Mutant C02 (clientHandlers.ts, retry): a key that erred because an input
// did is recommended to waiting too, not only the tasks that failed themselves
// (Dask's stimulus_retry: only the `roots`, keys without erred dependencies).
test("retrying a key and the input it erred for retries the input only: the key follows", () => {
  const s = oneWorkerTwoThreads();
  s.handleStimulus(t.updateGraph("c", { a: t.task(), y: t.task(["a"]) }, ["y", "a"]));
  s.handleStimulus(t.taskErred("w1", "a", s.tasks.get("a")?.runId ?? -1));
  expect(s.tasks.get("y")?.state).toBe("erred");
  const out = s.handleStimulus(t.fromClient({ op: "retry", keys: ["y", "a"], clientId: "c" }));
  // y is not sent back to waiting before a is retried: it never errs again.
  expect(t.summarize(out).filter((m) => m.includes("task-erred"))).toEqual([]);
  expect(t.summarize(out).filter((m) => m === "client:c task-retried y")).toHaveLength(1);
  expect(s.tasks.get("a")?.state).toBe("processing");
  expect(s.tasks.get("y")?.state).toBe("waiting");
  s.validateState();
});

// Mutant C03 (clientHandlers.ts, reportOnKey): a key erred for an input's
// error reported to a client asking for it later with itself as the blame
// (Dask's report_on_key sends ts.exception_blame's exception).
test("a client asking for a key erred because of its input hears the input's error", () => {
  const s = oneWorkerTwoThreads();
  s.handleStimulus(t.updateGraph("c1", { a: t.task(), y: t.task(["a"]) }, ["y"]));
  s.handleStimulus(t.taskErred("w1", "a", s.tasks.get("a")?.runId ?? -1, "ValueError: bad a"));
  expect(s.tasks.get("y")?.state).toBe("erred");
  const out = s.handleStimulus(t.updateGraph("c2", {}, ["y"]));
  expect(t.summarize(out)).toEqual(["client:c2 task-erred y"]);
  expect(out[0].msg).toMatchObject({
    op: "task-erred",
    key: "y",
    blame: "a",
    exceptionText: "ValueError: bad a",
  });
  s.validateState();
});

describe("cancel-keys of a key other clients want too", () => {
  // Mutant C04 (clientHandlers.ts, cancelKeys): a key other clients want too
  // treated as this client's alone, so its dependents are cancelled as well.
  test("cancelling a shared key leaves the requester's tasks that depend on it", () => {
    const s = oneWorkerTwoThreads();
    s.handleStimulus(t.updateGraph("c1", { a: t.task(), b: t.task(["a"]) }, ["a", "b"]));
    s.handleStimulus(t.updateGraph("c2", {}, ["a"]));
    const out = s.handleStimulus(t.cancelKeys("c1", ["a"]));
    expect(t.summarize(out)).toEqual(["client:c1 cancelled-keys a"]);
    expect(s.tasks.get("b")?.state).toBe("waiting");
    expect([...(s.tasks.get("b")?.whoWants ?? [])].map((c) => c.id)).toEqual(["c1"]);
    expect([...(s.tasks.get("a")?.whoWants ?? [])].map((c) => c.id)).toEqual(["c2"]);
    s.validateState();
  });
});
