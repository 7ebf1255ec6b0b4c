/**
 * Events built by hand with fields of the wrong kind (from JavaScript, or past the
 * types with `as`) are refused by their constructors with a TypeError naming the class
 * and the field, instead of failing deep in a handler or corrupting the state.
 */
import { describe, expect, it } from "vitest";
import {
  AcquireReplicasEvent,
  CancelComputeEvent,
  ComputeTaskEvent,
  type ComputeTaskFields,
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  FindMissingEvent,
  FreeKeysEvent,
  GatherDepBusyEvent,
  GatherDepFailureEvent,
  GatherDepNetworkFailureEvent,
  GatherDepSuccessEvent,
  PauseEvent,
  RefreshWhoHasEvent,
  RemoveReplicasEvent,
  RemoveWorkerEvent,
  RescheduleEvent,
  RetryBusyWorkerEvent,
  SecedeEvent,
  StealRequestEvent,
  UnpauseEvent,
  UpdateDataEvent,
} from "./events.ts";
import { ADDR, compute, W2 } from "./testing.ts";
import { WorkerState } from "./workerState.ts";

/** Fields of a valid ComputeTaskEvent, with `over` replacing some. */
function computeFields(over: Record<string, unknown>): ComputeTaskFields {
  return {
    key: "x",
    runId: 0,
    whoHas: { y: [W2] },
    nbytes: { y: 1 },
    priority: [0],
    duration: 1,
    runSpec: null,
    resourceRestrictions: {},
    actor: false,
    annotations: {},
    spanId: null,
    stimulusId: "s1",
    ...over,
  } as ComputeTaskFields;
}

function refused(make: () => unknown): TypeError {
  try {
    make();
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return err as TypeError;
  }
  throw new Error("the constructor accepted it");
}

describe("event constructors", () => {
  it("refuse a missing object of fields or stimulus id, naming the class", () => {
    expect(refused(() => new PauseEvent(undefined as never)).message).toBe(
      "PauseEvent: expected an object of fields, got nothing",
    );
    const noId = [
      () => new UnpauseEvent({} as never),
      () => new FindMissingEvent({ stimulusId: 5 } as never),
      () => new GatherDepBusyEvent({ worker: W2, totalNbytes: 1 } as never),
      () => new ComputeTaskEvent(computeFields({ stimulusId: undefined })),
    ];
    for (const [i, name] of ["UnpauseEvent", "FindMissingEvent", "GatherDepBusyEvent"].entries()) {
      expect(refused(noId[i]).message).toMatch(new RegExp(`^${name}: stimulusId must be a string`));
    }
    expect(refused(noId[3]).message).toBe(
      "ComputeTaskEvent: stimulusId must be a string, got nothing",
    );
  });

  it.each([
    [{ key: 5 }, "key must be a string, got number 5"],
    [{ runId: Number.NaN }, "runId must be an integer, got number NaN"],
    [{ priority: "abc" }, 'priority must be a list of numbers, got string "abc"'],
    [{ priority: [0, "1"] }, 'priority must be a list of numbers, got a list ([0,"1"])'],
    [{ priority: [1n] }, 'priority must be a list of numbers, got a list (["1n"])'],
    [{ priority: null }, "priority must be a list of numbers, got null"],
    [{ whoHas: { y: null } }, 'whoHas["y"] must be a list of worker addresses, got null'],
    [{ whoHas: { y: W2 } }, `whoHas["y"] must be a list of worker addresses, got string "${W2}"`],
    [{ whoHas: [["y", [W2]]] }, "whoHas must be a Map or a plain object"],
    [{ nbytes: { y: "big" } }, 'nbytes["y"] must be a number, got string "big"'],
    [{ resourceRestrictions: { GPU: "1" } }, 'resourceRestrictions["GPU"] must be a number'],
    [{ resourceRestrictions: new Map([[1, 1]]) }, "resourceRestrictions's keys must be strings"],
    [{ duration: "1" }, 'duration must be a number, got string "1"'],
    [{ actor: 0 }, "actor must be true or false, got number 0"],
    [{ annotations: null }, "annotations must be an object, got null"],
    [{ spanId: 7 }, "spanId must be a string or null, got number 7"],
  ])("ComputeTaskEvent refuses %o", (over, message) => {
    const err = refused(() => new ComputeTaskEvent(computeFields(over)));
    expect(err.message.startsWith(`ComputeTaskEvent: ${message}`), err.message).toBe(true);
  });

  it.each([
    [() => new RetryBusyWorkerEvent({ worker: null, stimulusId: "s" } as never), "worker"],
    [() => new RemoveWorkerEvent({ stimulusId: "s" } as never), "worker"],
    [
      () =>
        new GatherDepNetworkFailureEvent({
          worker: W2,
          totalNbytes: "1",
          stimulusId: "s",
        } as never),
      "totalNbytes",
    ],
    [
      () =>
        new GatherDepSuccessEvent({
          worker: W2,
          totalNbytes: 1,
          data: null,
          stimulusId: "s",
        } as never),
      "data",
    ],
    [
      () =>
        GatherDepFailureEvent.fromException(
          new Error("x"),
          { worker: W2, totalNbytes: 1, stimulusId: "s" },
          () => ({ exceptionText: 1 }) as never,
        ),
      "exceptionText",
    ],
    [
      () =>
        new ExecuteSuccessEvent({
          ...ExecuteSuccessEvent.dummy("x", { stimulusId: "s" }),
          type: 5 as never,
        }),
      "type",
    ],
    [() => ExecuteSuccessEvent.dummy("x", { stimulusId: "s", runId: 1.5 }), "runId"],
    [
      () =>
        new ExecuteFailureEvent({
          ...ExecuteFailureEvent.dummy("x", { stimulusId: "s" }),
          start: "0",
        } as never),
      "start",
    ],
    [() => new RescheduleEvent({ stimulusId: "s" } as never), "key"],
    [() => new CancelComputeEvent({ key: ["x"], stimulusId: "s" } as never), "key"],
    [() => new StealRequestEvent({ key: null, stimulusId: "s" } as never), "key"],
    [() => new RefreshWhoHasEvent({ whoHas: null, stimulusId: "s" } as never), "whoHas"],
    [() => new AcquireReplicasEvent({ whoHas: { x: [W2] }, stimulusId: "s" } as never), "nbytes"],
    [() => new FreeKeysEvent({ keys: "xyz", stimulusId: "s" } as never), "keys"],
    [() => new RemoveReplicasEvent({ keys: null, stimulusId: "s" } as never), "keys"],
    [() => new UpdateDataEvent({ data: "ab", stimulusId: "s" } as never), "data"],
    [
      () => new SecedeEvent({ key: "x", computeDuration: null, stimulusId: "s" } as never),
      "computeDuration",
    ],
  ])("%#: refuses a bad %s", (make, field) => {
    const err = refused(make);
    expect(err.message).toMatch(new RegExp(`^[A-Za-z]+Event: ${field}(\\[| must be)`));
  });

  it("say what they expected and what they got, as docs/worker-state.md shows", () => {
    expect(refused(() => new FreeKeysEvent({ keys: "xyz", stimulusId: "s" } as never))).toEqual(
      new TypeError('FreeKeysEvent: keys must be a list of keys (strings), got string "xyz"'),
    );
  });

  it("take what the seed takes and decides on by handling it", () => {
    const ws = new WorkerState({ address: ADDR, resources: { GPU: 1 } });
    // Negative restrictions, infinite priorities, NaN sizes: the state machine's business.
    ws.handleStimulus(
      new ComputeTaskEvent(
        computeFields({
          key: "z",
          whoHas: {},
          nbytes: {},
          priority: [Number.NEGATIVE_INFINITY],
          resourceRestrictions: { GPU: -1 },
        }),
      ),
      new ComputeTaskEvent(computeFields({ nbytes: { y: Number.NaN }, runId: -1 })),
      new FreeKeysEvent({ keys: ["unknown", "unknown"], stimulusId: "s2" }),
    );
    expect(ws.tasks.get("z")?.state).toBe("executing");
    expect(ws.tasks.get("x")?.state).toBe("waiting");
  });

  it("keep checked events as they were in the stimulus log", () => {
    const ws = new WorkerState({ address: ADDR });
    ws.handleStimulus(
      compute("x", "s1"),
      ExecuteSuccessEvent.dummy("x", { stimulusId: "s2", value: 3 }),
    );
    expect(ws.stimulusLog.toArray().map((e) => [e.cls, e.stimulusId])).toEqual([
      ["ComputeTaskEvent", "s1"],
      ["ExecuteSuccessEvent", "s2"],
    ]);
  });
});

describe("dummy constructors", () => {
  it("ComputeTaskEvent.dummy gives each holder's key 1 byte for nbytes missing or empty, as the seed's `nbytes or {...}`", () => {
    const whoHas = { x: ["tcp://a:1"] };
    for (const nbytes of [undefined, {}]) {
      const ev = ComputeTaskEvent.dummy("y", { whoHas, nbytes, stimulusId: "c" });
      expect([...ev.nbytes]).toEqual([["x", 1]]);
    }
    expect([
      ...ComputeTaskEvent.dummy("y", { whoHas, nbytes: { x: 5 }, stimulusId: "c" }).nbytes,
    ]).toEqual([["x", 5]]);
  });
});
