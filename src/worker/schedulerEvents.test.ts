import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { editedSample } from "../util/testEdits.ts";
import { MalformedMessageError, schedulerMessageToEvent } from "./schedulerEvents.ts";
import { ComputeTaskEvent } from "./state/events.ts";
import { SerializedTask } from "./state/taskState.ts";

const compute = {
  op: "compute-task",
  key: "b",
  runId: 3,
  whoHas: { a: ["tcp://w1:1"] },
  nbytes: { a: 10 },
  priority: [0, 1, 2],
  duration: 0.5,
  runSpec: { fn: "inc", args: [{ __weftRef: "a" }] },
  resourceRestrictions: { GPU: 1 },
  actor: false,
  annotations: { x: 1 },
  spanId: null,
  stimulusId: "s1",
};

describe("schedulerMessageToEvent", () => {
  it("turns compute-task into a ComputeTaskEvent with the TaskSpec as run spec", () => {
    const ev = schedulerMessageToEvent(compute) as ComputeTaskEvent;
    expect(ev).toBeInstanceOf(ComputeTaskEvent);
    expect(ev.key).toBe("b");
    expect(ev.runId).toBe(3);
    expect(ev.whoHas.get("a")).toEqual(["tcp://w1:1"]);
    expect(ev.nbytes.get("a")).toBe(10);
    expect(ev.resourceRestrictions.get("GPU")).toBe(1);
    expect(ev.runSpec).toBeInstanceOf(SerializedTask);
    expect(ev.runSpec.task).toEqual(compute.runSpec);
    expect(ev.stimulusId).toBe("s1");
  });

  it("accepts Maps where objects are expected, and fills optional fields", () => {
    const {
      resourceRestrictions: _r,
      actor: _a,
      annotations: _n,
      spanId: _s,
      duration: _d,
      ...minimal
    } = compute;
    const ev = schedulerMessageToEvent({
      ...minimal,
      whoHas: new Map([["a", ["w"]]]),
      nbytes: new Map([["a", 1]]),
    }) as ComputeTaskEvent;
    expect(ev.whoHas.get("a")).toEqual(["w"]);
    expect(ev.actor).toBe(false);
    expect(ev.spanId).toBeNull();
  });

  it("takes the scheduler's Maps as they are, once checked", () => {
    const whoHas = new Map([["a", ["w"]]]);
    const nbytes = new Map([["a", 1]]);
    const ev = schedulerMessageToEvent({ ...compute, whoHas, nbytes }) as ComputeTaskEvent;
    expect(ev.whoHas).toBe(whoHas);
    expect(ev.nbytes).toBe(nbytes);
    expect(() =>
      schedulerMessageToEvent({ ...compute, whoHas: new Map([["a", ["w", "w"]]]), nbytes }),
    ).toThrow('whoHas["a"] lists a worker twice');
    expect(() =>
      schedulerMessageToEvent({ ...compute, whoHas: new Map([[1, ["w"]]]), nbytes }),
    ).toThrow("whoHas keys must be strings");
    expect(() =>
      schedulerMessageToEvent({ ...compute, whoHas, nbytes: new Map([["a", "big"]]) }),
    ).toThrow('nbytes["a"] must be an integer from 0 to 2^53 - 1, got string "big"');
  });

  it.each([
    ["free-keys", { op: "free-keys", keys: ["a"], stimulusId: "s" }, "FreeKeysEvent"],
    [
      "remove-replicas",
      { op: "remove-replicas", keys: ["a"], stimulusId: "s" },
      "RemoveReplicasEvent",
    ],
    [
      "acquire-replicas",
      { op: "acquire-replicas", whoHas: { a: ["w"] }, nbytes: { a: 1 }, stimulusId: "s" },
      "AcquireReplicasEvent",
    ],
    [
      "refresh-who-has",
      { op: "refresh-who-has", whoHas: { a: [] }, stimulusId: "s" },
      "RefreshWhoHasEvent",
    ],
    ["steal-request", { op: "steal-request", key: "a", stimulusId: "s" }, "StealRequestEvent"],
    ["remove-worker", { op: "remove-worker", worker: "w", stimulusId: "s" }, "RemoveWorkerEvent"],
    ["pause", { op: "pause", stimulusId: "s" }, "PauseEvent"],
    ["unpause", { op: "unpause", stimulusId: "s" }, "UnpauseEvent"],
  ])("%s", (_op, msg, cls) => {
    expect(schedulerMessageToEvent(msg).cls).toBe(cls);
  });

  it.each([
    [null, "a scheduler message must be an object with an op"],
    [{ key: "x" }, "a scheduler message must have a string op"],
    [{ ...compute, runId: 1.5 }, "runId must be an integer, got number 1.5"],
    [{ ...compute, priority: "high" }, "priority must be an array of finite numbers"],
    [{ ...compute, nbytes: {} }, 'nbytes has no entry for "a"'],
    [{ ...compute, nbytes: { a: 1, z: 2 } }, 'whoHas has no entry for "z"'],
    [{ ...compute, whoHas: { a: ["w", "w"] } }, 'whoHas["a"] lists a worker twice'],
    [{ ...compute, whoHas: { a: ["u", "v", "w", "v"] } }, 'whoHas["a"] lists a worker twice'],
    [
      { ...compute, whoHas: { a: [..."abcdefghij"].map((c) => `w${c}`).concat("wc") } },
      'whoHas["a"] lists a worker twice',
    ],
    [{ ...compute, whoHas: { a: "w" } }, 'whoHas["a"] must be an array of worker addresses'],
    [{ ...compute, runSpec: "inc" }, "runSpec must be an object or null"],
    [{ ...compute, stimulusId: 3 }, "stimulusId must be a string, got number 3"],
    [{ op: "steal-request", stimulusId: "s" }, "key must be a string, got nothing"],
    // Sizes are added to and subtracted from the transfer totals, which must come back exactly.
    [{ ...compute, nbytes: { a: 1.5 } }, 'nbytes["a"] must be an integer from 0 to 2^53 - 1'],
    [{ ...compute, nbytes: { a: -1 } }, 'nbytes["a"] must be an integer from 0 to 2^53 - 1'],
    [{ ...compute, nbytes: { a: 2 ** 60 } }, 'nbytes["a"] must be an integer from 0 to 2^53'],
    [
      { ...compute, resourceRestrictions: { GPU: -1 } },
      "must be a finite number ≥ 0, got number -1",
    ],
  ])("rejects %j", (msg, why) => {
    expect(() => schedulerMessageToEvent(msg)).toThrow(MalformedMessageError);
    expect(() => schedulerMessageToEvent(msg)).toThrow(why);
  });
});

describe("schedulerMessageToEvent with the worker's resources", () => {
  it("refuses a compute-task restricted to a resource the worker does not have", () => {
    const have = new Map([["CPU", 4]]);
    expect(() => schedulerMessageToEvent(compute, have)).toThrow(
      'malformed compute-task message: task "b" is restricted to the resource "GPU", which this worker does not have (it has "CPU")',
    );
    expect(() => schedulerMessageToEvent(compute, new Map())).toThrow("(it has none)");
    const ev = schedulerMessageToEvent(compute, new Map([["GPU", 1]])) as ComputeTaskEvent;
    expect(ev.resourceRestrictions.get("GPU")).toBe(1);
    expect(schedulerMessageToEvent({ ...compute, resourceRestrictions: {} }, have).cls).toBe(
      "ComputeTaskEvent",
    );
  });
});

describe("schedulerMessageToEvent on edited messages", () => {
  const samples: unknown[] = [
    compute,
    { op: "free-keys", keys: ["a"], stimulusId: "s" },
    { op: "remove-replicas", keys: ["a"], stimulusId: "s" },
    { op: "acquire-replicas", whoHas: { a: ["w"] }, nbytes: { a: 1 }, stimulusId: "s" },
    { op: "refresh-who-has", whoHas: { a: ["w"] }, stimulusId: "s" },
    { op: "steal-request", key: "a", stimulusId: "s" },
    { op: "remove-worker", worker: "w", stimulusId: "s" },
    { op: "pause", stimulusId: "s" },
  ];
  it("shows values JSON cannot hold in its errors", () => {
    expect(() => schedulerMessageToEvent({ ...compute, runId: 1n })).toThrow(
      "runId must be an integer, got bigint 1n",
    );
    expect(() => schedulerMessageToEvent({ ...compute, nbytes: new Map([["a", 1n]]) })).toThrow(
      'nbytes["a"] must be an integer from 0 to 2^53 - 1, got bigint 1n',
    );
    expect(() => schedulerMessageToEvent({ op: 7n })).toThrow(MalformedMessageError);
  });

  it("gives an event or a MalformedMessageError, never another error", () => {
    fc.assert(
      fc.property(editedSample(samples), (msg) => {
        try {
          schedulerMessageToEvent(msg);
        } catch (err) {
          if (!(err instanceof MalformedMessageError)) throw err;
        }
      }),
      { numRuns: 3000 },
    );
  });
});
