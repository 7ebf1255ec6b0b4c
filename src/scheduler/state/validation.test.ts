import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { AssertionError } from "../../util/pyErrors.ts";
import { editedSample } from "../../util/testEdits.ts";
import { InvalidStimulus, InvalidTaskState, TransitionCounterMaxExceeded } from "./errors.ts";
import type { SchedulerEvent } from "./events.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

function running(options: ConstructorParameters<typeof SchedulerState>[0] = {}): SchedulerState {
  const s = new SchedulerState({ validate: true, ...options });
  s.handleStimulus(t.registerWorker("w1"));
  s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task(["a"]) }, ["b"], "g"));
  return s;
}

describe("malformed stimuli", () => {
  const cases: [string, unknown, RegExp][] = [
    ["no kind", { msg: {} }, /unknown kind/],
    [
      "unknown op",
      { kind: "worker-message", worker: "w1", msg: { op: "bogus", stimulusId: "s" } },
      /unknown op "bogus"/,
    ],
    ["no stimulus id", { kind: "remove-worker", worker: "w1" }, /stimulusId/],
    [
      "keys not an array",
      {
        kind: "client-message",
        msg: { op: "client-releases-keys", keys: "a", clientId: "c", stimulusId: "s" },
      },
      /keys must be an array/,
    ],
    [
      "run id not an integer",
      {
        kind: "worker-message",
        worker: "w1",
        msg: {
          op: "task-finished",
          key: "a",
          runId: "1",
          nbytes: 1,
          typename: "x",
          stimulusId: "s",
        },
      },
      /runId/,
    ],
    [
      "infinite result size",
      {
        kind: "worker-message",
        worker: "w1",
        msg: {
          op: "task-finished",
          key: "a",
          runId: 1,
          nbytes: Number.POSITIVE_INFINITY,
          typename: "x",
          stimulusId: "s",
        },
      },
      /nbytes must be an integer from 0 to 2\^53 - 1 or null, got Infinity/,
    ],
    ...[1.5, 1e300, -1].map((nbytes): [string, unknown, RegExp] => [
      `result size ${nbytes}`,
      {
        kind: "worker-message",
        worker: "w1",
        msg: { op: "task-finished", key: "a", runId: 1, nbytes, typename: "x", stimulusId: "s" },
      },
      new RegExp(
        `nbytes must be an integer from 0 to 2\\^53 - 1 or null, got ${String(nbytes).replace("+", "\\+")}`,
      ),
    ]),
    [
      "steal-response with an unknown state",
      {
        kind: "worker-message",
        worker: "w1",
        msg: { op: "steal-response", key: "a", state: "Ready", stimulusId: "s" },
      },
      /state must be a worker task state or null, got "Ready"/,
    ],
    [
      "registration from another address",
      {
        kind: "worker-message",
        worker: "w9",
        msg: { op: "register-worker", address: "w1", nthreads: 1, resources: {}, stimulusId: "s" },
      },
      /address w1 ≠ sender w9/,
    ],
    [
      "an op JSON cannot show",
      { kind: "worker-message", worker: "w1", msg: { op: 1n, stimulusId: "s" } },
      /invalid worker-message "1n": unknown op "1n"/,
    ],
    [
      "a client op without a prototype",
      {
        kind: "client-message",
        msg: { op: Object.create(null), clientId: "c", stimulusId: "s" },
      },
      /invalid client-message \{\}: unknown op \{\}/,
    ],
    [
      "steal-response with a BigInt state",
      {
        kind: "worker-message",
        worker: "w1",
        msg: { op: "steal-response", key: "a", state: 2n, stimulusId: "s" },
      },
      /state must be a worker task state or null, got "2n"/,
    ],
    [
      "nthreads without a prototype",
      {
        kind: "worker-message",
        worker: "w2",
        msg: {
          op: "register-worker",
          address: "w2",
          nthreads: Object.create(null),
          resources: {},
          stimulusId: "s",
        },
      },
      /nthreads must be a positive integer, got \{\}/,
    ],
    [
      "a field that throws when read",
      {
        kind: "worker-message",
        worker: "w1",
        msg: {
          op: "task-finished",
          get key(): string {
            throw new Error("no key here");
          },
          stimulusId: "s",
        },
      },
      /invalid stimulus: no key here/,
    ],
    [
      "task-finished metadata with a field that throws when read",
      {
        kind: "worker-message",
        worker: "w1",
        msg: {
          op: "task-finished",
          key: "a",
          runId: 1,
          nbytes: 8,
          typename: "int",
          metadata: {
            get note(): string {
              throw new Error("no metadata here");
            },
          },
          stimulusId: "s",
        },
      },
      /invalid stimulus: no metadata here/,
    ],
  ];
  for (const [name, ev, message] of cases) {
    test(`${name}: InvalidStimulus, state unchanged`, () => {
      const s = running();
      const before = s.transitionCounter;
      expect(() => s.handleStimulus(ev as SchedulerEvent)).toThrow(InvalidStimulus);
      expect(() => s.handleStimulus(ev as SchedulerEvent)).toThrow(message);
      expect(s.transitionCounter).toBe(before);
      s.validateState();
    });
  }
});

describe("edited stimuli", () => {
  /** A running scheduler: `a` computing on w1, `b` waiting for it, w2 idle. */
  function busy(): SchedulerState {
    const s = running();
    s.handleStimulus(t.registerWorker("w2"));
    return s;
  }
  const runIdOfA = (s: SchedulerState): number => s.tasks.get("a")?.runId ?? 0;
  const samples = (s: SchedulerState): SchedulerEvent[] => [
    t.updateGraph("c2", { x: t.task(), y: t.task(["x"], { priority: 1, retries: 1 }) }, ["y"]),
    t.taskFinished("w1", "a", runIdOfA(s)),
    t.taskErred("w1", "a", runIdOfA(s)),
    t.stealResponse("w1", "a", "executing"),
    t.stealRequest("a", "w1", "w2"),
    t.registerWorker("w3", 2, { GPU: 1 }),
    t.removeWorker("w1"),
    t.releaseKeys("c", ["b"]),
    t.cancelKeys("c", ["b"], true),
    t.fromClient({ op: "client-desires-keys", clientId: "c", keys: ["a"] }),
    t.fromWorker("w1", { op: "add-keys", keys: ["a"] }),
    t.fromWorker("w1", { op: "long-running", key: "a", computeDuration: 0.5, runId: 1 }),
    t.fromWorker("w1", { op: "reschedule", key: "a" }),
    t.fromWorker("w1", { op: "release-worker-data", key: "a" }),
    t.fromWorker("w1", { op: "worker-status-change", status: "paused" }),
    t.fromWorker("w1", { op: "request-refresh-who-has", keys: ["a"] }),
  ];

  test("are refused with InvalidStimulus before any change, or handled; nothing else", () => {
    const template = samples(busy());
    fc.assert(
      fc.property(editedSample(template, 4), (ev) => {
        const s = busy();
        const before = s.transitionCounter;
        try {
          s.handleStimulus(ev as SchedulerEvent);
        } catch (err) {
          // Anything but InvalidStimulus stops a scheduler (stimulusRunner.ts).
          if (!(err instanceof InvalidStimulus)) throw err;
          expect(s.transitionCounter).toBe(before);
        }
        s.validateState();
      }),
      { numRuns: 3000 },
    );
  });
});

describe("batches", () => {
  test("a malformed stimulus anywhere in a batch rejects the whole batch unhandled", () => {
    const s = running();
    const before = s.transitionCounter;
    expect(() =>
      s.handleStimulus(
        t.taskFinished("w1", "a", 1),
        t.registerWorker("w2"),
        t.registerWorker("w2"),
      ),
    ).toThrow(/w2 is already registered/);
    expect(s.transitionCounter).toBe(before);
    expect(s.workers.has("w2")).toBe(false);
    expect(s.tasks.get("a")?.state).toBe("processing");
  });

  test("an address a batch removes may register again later in the batch", () => {
    const s = running();
    const out = s.handleStimulus(t.removeWorker("w1"), t.registerWorker("w1"));
    expect(t.summarize(out)).toEqual(["w1 compute-task a"]);
    expect(s.workers.get("w1")?.processing.size).toBe(1);
    expect(() =>
      s.handleStimulus(t.removeWorker("w1"), t.registerWorker("w1"), t.registerWorker("w1")),
    ).toThrow(/w1 is already registered/);
    s.validateState();
  });

  test("a failed call leaves no messages behind for the next one", () => {
    const s = running();
    const b = s.tasks.get("b");
    if (b === undefined) throw new Error("no b");
    b.hasLostDependencies = true; // breaks b's validation once a finishes and b starts
    expect(() => s.handleStimulus(t.taskFinished("w1", "a", 1))).toThrow(InvalidTaskState);
    expect(s.handleStimulus(t.fromWorker("w1", { op: "heartbeat-worker" }))).toEqual([]);
  });
});

describe("validation", () => {
  test("validateState catches bookkeeping that disagrees with the tasks", () => {
    const s = running();
    const w1 = s.workers.get("w1");
    if (w1 === undefined) throw new Error("no w1");
    expect(w1.occupancy).toBe(0.5);
    w1.occupancySum += 3;
    expect(() => s.validateState()).toThrow(AssertionError);
    expect(() => s.validateState()).toThrow(/occupancy/);
  });

  test("validateState catches a worker counting a task of a function it does not run", () => {
    const s = running();
    const w1 = s.workers.get("w1");
    if (w1 === undefined) throw new Error("no w1");
    w1.countsByFn.set("g", 1);
    expect(() => s.validateState()).toThrow("w1: countsByFn counts 1 tasks of g, not 0");
    w1.countsByFn.delete("g");
    w1.countsByFn.set("f", 2);
    expect(() => s.validateState()).toThrow("w1: countsByFn counts 2 tasks of f, not 1");
  });

  test("validateState catches two workers of one name", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(
      t.registerWorker("w1", 1, {}, undefined, { name: "a" }),
      t.registerWorker("w2", 1, {}, undefined, { name: "b" }),
    );
    s.validateState();
    (s.workers.get("w2") as { name: string | null }).name = "a";
    expect(() => s.validateState()).toThrow("workers w1 and w2 share a name");
  });

  test("validateState catches a task done but not counted, or a count too small", () => {
    const s = running();
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    s.validateState();
    s.tasksDone = 0;
    expect(() => s.validateState()).toThrow(/tasksDone 0 < 1 tasks done/);
    const a = s.tasks.get("a");
    if (a === undefined) throw new Error("no a");
    a.everDone = false;
    expect(() => s.validateState()).toThrow(/not counted in tasksDone/);
  });

  test("counts the tasks done by erring once each (a dependent erred too), and validation checks it", () => {
    const s = running();
    s.handleStimulus(t.taskErred("w1", "a", 1));
    // a erred, and b, its dependent, with it.
    expect([s.tasksDone, s.tasksDoneErred]).toEqual([2, 2]);
    s.validateState();
    s.tasksDoneErred = 1;
    expect(() => s.validateState()).toThrow(/tasksDoneErred 1: fewer than the 2 tasks done erring/);
    s.tasksDoneErred = 3;
    expect(() => s.validateState()).toThrow(/or more than tasksDone 2/);
  });

  test("validateState catches a blame on a task that is not erred", () => {
    const s = running();
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    const a = s.tasks.get("a");
    if (a === undefined) throw new Error("no a");
    a.exceptionBlame = a;
    expect(() => s.validateState()).toThrow(/has an exception to blame but is not erred/);
  });

  test("validateState catches a task stuck or left over: nothing would move it any more", () => {
    // b waits on a; a task is made to look stuck in each way, then restored.
    const s = running();
    const a = s.tasks.get("a");
    const b = s.tasks.get("b");
    if (a === undefined || b === undefined) throw new Error("no a or b");
    s.validateState();
    // A wanted task left released.
    s.handleStimulus(t.updateGraph("c", { r: t.task() }, ["r"]));
    const r = s.tasks.get("r");
    if (r === undefined) throw new Error("no r");
    const saved = { state: r.state, on: r.processingOn };
    r.state = "released";
    r.processingOn = null;
    saved.on?.processing.delete(r);
    expect(() => s.validateTask(r)).toThrow(/is wanted but not computed/);
    // A released task nothing needs, not forgotten.
    r.whoWants = new Set();
    expect(() => s.validateTask(r)).toThrow(/is needed by nothing but not forgotten/);
    // A waiting task whose input erred.
    a.state = "erred";
    a.exceptionBlame = a;
    expect(() => s.validateTask(b)).toThrow(/waits on <TaskState 'a' erred>/);
  });

  test("validateState catches a task in no-worker that a running worker may run", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1", 1, { GPU: 1 }));
    s.handleStimulus(t.updateGraph("c", { g: t.task([], { resources: { GPU: 2 } }) }, ["g"]));
    const g = s.tasks.get("g");
    expect(g?.state).toBe("no-worker");
    s.validateState();
    if (g === undefined) throw new Error("no g");
    g.resourceRestrictions = { GPU: 1 };
    expect(() => s.validateState()).toThrow(/is in no-worker, but w1 may run it/);
  });

  test("validateState catches an actor its worker does not count, or one counted elsewhere", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(
      t.updateGraph("c", { a: t.task([], { actor: true }), x: t.task() }, ["a", "x"]),
    );
    const a = s.tasks.get("a");
    const x = s.tasks.get("x");
    if (a === undefined || x === undefined) throw new Error("no a or x");
    const home = a.processingOn;
    const other = s.workers.get(home?.address === "w1" ? "w2" : "w1");
    if (home === null || other === undefined) throw new Error("a is not processing");
    home.actors.delete(a);
    expect(() => s.validateState()).toThrow(
      /actor <TaskState 'a' processing> not among the actors/,
    );
    home.actors.add(a);
    s.handleStimulus(t.taskFinished(home.address, "a", a.runId));
    s.validateState();
    home.actors.delete(a);
    expect(() => s.validateState()).toThrow(
      /actor <TaskState 'a' memory> lives on 0 of its holders/,
    );
    home.actors.add(a);
    other.actors.add(a);
    expect(() => s.validateState()).toThrow(
      /counts actor <TaskState 'a' memory>, neither processing/,
    );
    other.actors.delete(a);
    home.actors.add(x);
    expect(() => s.validateState()).toThrow(/counts <TaskState 'x' processing>, not an actor/);
  });

  test("a broken task fails with InvalidTaskState carrying its story", () => {
    const s = running();
    const a = s.tasks.get("a");
    if (a === undefined) throw new Error("no a");
    s.workers.get("w1")?.processing.delete(a);
    let err: unknown;
    try {
      s.validateState();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidTaskState);
    const e = err as InvalidTaskState;
    expect(e.key).toBe("a");
    expect(e.state).toBe("processing");
    expect(e.story.length).toBeGreaterThan(0);
    expect(e.message).toContain("not in processing of w1");
  });

  test("with validate on, a stimulus that leaves a touched task broken throws", () => {
    const s = running();
    const b = s.tasks.get("b");
    if (b === undefined) throw new Error("no b");
    // Corrupt: b claims a lost dependency; it breaks when a finishes and b starts.
    b.hasLostDependencies = true;
    expect(() => s.handleStimulus(t.taskFinished("w1", "a", 1))).toThrow(InvalidTaskState);
  });

  test("transitionCounterMax stops runaway transition loops", () => {
    expect(() => running({ transitionCounterMax: 3 })).toThrow(TransitionCounterMaxExceeded);
  });
});

describe("story and logs", () => {
  test("story finds records by key, by recommended key, and by stimulus id", () => {
    const clock = (() => {
      let now = 100;
      return () => now++;
    })();
    const s = new SchedulerState({ clock });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task(["a"]) }, ["b"], "g"));
    s.handleStimulus(t.taskFinished("w1", "a", 1, 10, "fin"));
    expect(s.story("fin").map((e) => e.slice(0, 4))).toEqual([
      ["a", "processing", "memory", ["b", "processing"]],
      ["b", "waiting", "processing", []],
    ]);
    const storyB = s.story("b");
    expect(storyB.map((e) => `${e[0]}:${e[1]}>${e[2]}`)).toEqual([
      "b:released>waiting",
      "a:processing>memory",
      "b:waiting>processing",
    ]);
    expect(storyB.every((e) => e[5] >= 100)).toBe(true);
    expect(s.stimulusStory("fin")).toMatchObject([
      { stimulusId: "fin", kind: "worker-message", op: "task-finished", origin: "w1", key: "a" },
    ]);
  });

  test("the stimuli of one call are stamped with one clock reading, at their arrival", () => {
    let now = 100;
    const s = new SchedulerState({ clock: () => now++ });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task() }, ["a", "b"]));
    const before = now;
    s.handleStimulus(
      t.taskFinished("w1", "a", 1, 10, "fa"),
      t.taskFinished("w1", "b", 2, 10, "fb"),
    );
    expect(now).toBe(before + 1);
    const times = [...s.story("fa"), ...s.story("fb")].map((e) => e[5]);
    expect(times.length).toBeGreaterThan(1);
    expect(new Set(times)).toEqual(new Set([before]));
    expect(s.workers.get("w1")?.lastSeen).toBe(before);
  });

  test("the transition log is bounded", () => {
    const s = new SchedulerState({ logLength: 3 });
    s.handleStimulus(t.registerWorker("w1"));
    s.handleStimulus(t.updateGraph("c", { a: t.task(), b: t.task(["a"]) }, ["b"]));
    s.handleStimulus(t.taskFinished("w1", "a", 1));
    expect(s.transitionCounter).toBe(5);
    expect(s.log.length).toBe(3);
    expect(s.log.toArray().map((e) => `${e[0]}:${e[1]}>${e[2]}`)).toEqual([
      "b:released>waiting",
      "a:processing>memory",
      "b:waiting>processing",
    ]);
  });

  test("the machine is deterministic: same stimuli, same messages", () => {
    const run = (): string[] => {
      const s = new SchedulerState();
      const out: string[] = [];
      const events: SchedulerEvent[] = [
        t.registerWorker("w1", 2, {}, "r1"),
        t.registerWorker("w2", 1, {}, "r2"),
        t.updateGraph(
          "c",
          { a: t.task(), b: t.task(), c: t.task(["a", "b"]), d: t.task(["c"]) },
          ["d"],
          "g",
        ),
      ];
      for (const ev of events) out.push(...t.summarize(s.handleStimulus(ev)));
      return out;
    };
    expect(run()).toEqual(run());
  });

  test("options default as docs/scheduler.md's table says", () => {
    const { clock, ...rest } = new SchedulerState().options;
    expect(clock()).toBe(0);
    expect(rest).toEqual({
      validate: false,
      workerSaturation: 1.1,
      allowedFailures: 3,
      unknownTaskDuration: 0.5,
      bandwidth: 100e6,
      defaultDataSize: 1024,
      transitionCounterMax: false,
      logLength: 100_000,
      stimulusLogLength: 10_000,
    });
  });

  test("bad options are rejected with the option named", () => {
    expect(() => new SchedulerState({ workerSaturation: 0 })).toThrow(/workerSaturation/);
    expect(() => new SchedulerState({ allowedFailures: -1 })).toThrow(/allowedFailures/);
    expect(() => new SchedulerState({ bandwidth: 0 })).toThrow(/bandwidth/);
    // A value out of range is a RangeError, one of the wrong kind a TypeError.
    expect(() => new SchedulerState({ unknownTaskDuration: -1 })).toThrow(RangeError);
    expect(() => new SchedulerState({ logLength: 0.5 })).toThrow(RangeError);
    expect(() => new SchedulerState({ transitionCounterMax: 0 })).toThrow(RangeError);
    expect(() => new SchedulerState({ validate: "yes" as never })).toThrow(TypeError);
    // Values that compare as positive but are not numbers would poison the arithmetic.
    expect(() => new SchedulerState({ workerSaturation: "2" as never })).toThrow(
      'workerSaturation must be > 0 (Infinity disables queuing), got "2"',
    );
    expect(() => new SchedulerState({ bandwidth: 5n as never })).toThrow(
      'bandwidth must be > 0, got "5n"',
    );
    expect(() => new SchedulerState({ defaultDataSize: 1.5 })).toThrow(
      "defaultDataSize must be an integer ≥ 0, got 1.5",
    );
    expect(() => new SchedulerState({ validate: 1 as never })).toThrow(
      "validate must be a boolean, got 1",
    );
    expect(() => new SchedulerState({ clock: Object.create(null) })).toThrow(
      "clock must be a function, got {}",
    );
    // Infinity is ≥ 0: the message says why it is refused all the same.
    expect(() => new SchedulerState({ unknownTaskDuration: Infinity })).toThrow(
      "unknownTaskDuration must be a finite number of seconds ≥ 0, got Infinity",
    );
  });

  test("options the machine does not have are refused, not left to their default", () => {
    expect(() => new SchedulerState({ workerSaturaton: 2 } as never)).toThrow(
      new TypeError(
        'SchedulerState options: unknown option "workerSaturaton" (did you mean workerSaturation?)',
      ),
    );
    expect(() => new SchedulerState(null as never)).toThrow(
      new TypeError("SchedulerState options must be an object, got null"),
    );
    expect(() => new SchedulerState(5 as never)).toThrow(
      new TypeError("SchedulerState options must be an object, got 5"),
    );
  });
});
