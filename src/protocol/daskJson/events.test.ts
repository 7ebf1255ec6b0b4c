import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AssertionError } from "../../util/pyErrors.ts";
import { showValue } from "../../util/showValue.ts";
import { editedSample } from "../../util/testEdits.ts";
import { ComputeTaskEvent, ExecuteSuccessEvent, FreeKeysEvent } from "../../worker/state/events.ts";
import { TaskFinishedMsg } from "../../worker/state/instructions.ts";
import { WorkerState } from "../../worker/state/workerState.ts";
import { decodeRecordedValue, EVENT_CLASSES, eventFromDict, eventToDict } from "./events.ts";
import { DaskDictError, FieldReader } from "./fields.ts";
import { instructionFromDict, instructionToDict, sortedStrings } from "./instructions.ts";
import { RecordedValue } from "./values.ts";

/** One recorded dict of every event class (FORMAT.md). */
const SAMPLES: Record<string, Record<string, unknown>> = {
  PauseEvent: {},
  UnpauseEvent: {},
  FindMissingEvent: {},
  RetryBusyWorkerEvent: { worker: "w:1" },
  RemoveWorkerEvent: { worker: "w:1" },
  GatherDepSuccessEvent: {
    worker: "w:1",
    total_nbytes: 10,
    data: { x: { typename: "int", sizeof: 28, value: 1 } },
  },
  GatherDepBusyEvent: { worker: "w:1", total_nbytes: 10 },
  GatherDepNetworkFailureEvent: { worker: "w:1", total_nbytes: 10 },
  GatherDepFailureEvent: {
    worker: "w:1",
    total_nbytes: 10,
    exception: null,
    traceback: null,
    exception_text: "ValueError('x')",
    traceback_text: "",
  },
  ComputeTaskEvent: {
    key: "y",
    run_id: 3,
    who_has: { x: ["w:1", "w:2"] },
    nbytes: { x: 10 },
    priority: [0, 1],
    duration: 0.5,
    run_spec: null,
    function: null,
    args: null,
    kwargs: null,
    resource_restrictions: { GPU: 1 },
    actor: false,
    annotations: { a: 1 },
    span_id: null,
  },
  ExecuteSuccessEvent: {
    key: "y",
    run_id: 3,
    value: { typename: "int", sizeof: 28, value: 2 },
    start: 0,
    stop: 1,
    nbytes: 28,
    type: "int",
  },
  ExecuteFailureEvent: {
    key: "y",
    run_id: 3,
    start: null,
    stop: null,
    exception: null,
    traceback: null,
    exception_text: "ZeroDivisionError('division by zero')",
    traceback_text: "",
  },
  RescheduleEvent: { key: "y" },
  CancelComputeEvent: { key: "y" },
  RefreshWhoHasEvent: { who_has: { x: ["w:1"] } },
  AcquireReplicasEvent: { who_has: { x: ["w:1"] }, nbytes: { x: 5 } },
  RemoveReplicasEvent: { keys: ["x"] },
  FreeKeysEvent: { keys: ["x", "y"] },
  StealRequestEvent: { key: "y" },
  UpdateDataEvent: { data: { x: { typename: "list", sizeof: 100, repr: "[...]" } } },
  SecedeEvent: { key: "y", compute_duration: 0.25 },
};

describe("Dask dict codec for events", () => {
  it("has a sample for every event class", () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...EVENT_CLASSES].sort());
    expect(EVENT_CLASSES.length).toBe(21);
  });

  for (const [cls, fields] of Object.entries(SAMPLES)) {
    it(`round-trips ${cls}`, () => {
      const d = { cls, stimulus_id: `s-${cls}`, ...fields };
      const ev = eventFromDict(d);
      expect(ev.cls).toBe(cls);
      expect(ev.stimulusId).toBe(`s-${cls}`);
      expect(eventToDict(ev)).toEqual(d);
    });
  }

  it("rejects an unknown class, naming it and the known ones", () => {
    expect(() => eventFromDict({ cls: "NoSuchEvent", stimulus_id: "s" })).toThrow(
      /unknown class "NoSuchEvent" \(known: .*ComputeTaskEvent/,
    );
    expect(() => eventFromDict({ cls: "toString", stimulus_id: "s" })).toThrow(DaskDictError);
  });

  it("names the event and the field that is missing or of the wrong type", () => {
    expect(() => eventFromDict({ cls: "FreeKeysEvent", stimulus_id: "s" })).toThrow(
      "FreeKeysEvent.keys: expected a value (the field is missing), got nothing",
    );
    expect(() => eventFromDict({ cls: "FreeKeysEvent", stimulus_id: "s", keys: "x" })).toThrow(
      'FreeKeysEvent.keys: expected a list of strings, got string "x"',
    );
    const bad = { cls: "ComputeTaskEvent", stimulus_id: "s", ...SAMPLES.ComputeTaskEvent };
    expect(() => eventFromDict({ ...bad, who_has: { x: "w:1" } })).toThrow(
      'ComputeTaskEvent.who_has["x"]: expected a list of worker addresses',
    );
    expect(() => eventFromDict({ ...bad, run_id: 1.5 })).toThrow(
      "ComputeTaskEvent.run_id: expected an integer",
    );
    // Past 2^53 the number was rounded as it was read: refused, not taken as another run.
    expect(() => eventFromDict({ ...bad, run_id: 2 ** 53 + 2 })).toThrow(
      "ComputeTaskEvent.run_id: expected an integer of at most 2^53 − 1 in size",
    );
    // The words for the bad value are the event constructors' (valueShapes.ts).
    expect(() => eventFromDict({ ...bad, priority: "abc" })).toThrow(
      'ComputeTaskEvent.priority: expected a list of numbers, got string "abc"',
    );
    expect(() => eventFromDict({ ...bad, nbytes: { x: 1n } })).toThrow(
      'ComputeTaskEvent.nbytes["x"]: expected a number, got bigint 1n',
    );
    // The seed asserts one or the other; a dict with both is malformed, not an AssertionError.
    expect(() => eventFromDict({ ...bad, function: "f", run_spec: "spec" })).toThrow(
      /ComputeTaskEvent\.function: expected null when run_spec is given.*got string "f"/,
    );
    expect(() => eventFromDict({ ...bad, function: "f", run_spec: "spec" })).toThrow(DaskDictError);
    expect(() => eventFromDict(null)).toThrow(DaskDictError);
    expect(() => eventFromDict([1, 2])).toThrow(DaskDictError);
    // Every field Dask's events carry is required (null where Dask allows None), not
    // filled in: a misspelt one is named, not left to show as a state divergence.
    const without = (d: Record<string, unknown>, field: string) => {
      const { [field]: _dropped, ...rest } = d;
      return rest;
    };
    const misspelt = without(bad, "resource_restrictions");
    expect(() => eventFromDict({ ...misspelt, resource_restriction: { A: 1 } })).toThrow(
      "ComputeTaskEvent.resource_restrictions: expected a value (the field is missing), got nothing",
    );
    expect(() => eventFromDict(without(bad, "span_id"))).toThrow(
      /ComputeTaskEvent\.span_id: .*missing/,
    );
    expect(eventFromDict({ ...bad, span_id: null }).cls).toBe("ComputeTaskEvent");
    // run_spec alone may be absent: Dask's dumps leave it out of their stimulus logs.
    expect(eventFromDict(without(bad, "run_spec")).cls).toBe("ComputeTaskEvent");
    const ok = { cls: "ExecuteFailureEvent", stimulus_id: "s", ...SAMPLES.ExecuteFailureEvent };
    expect(() => eventFromDict(without(ok, "start"))).toThrow(
      /ExecuteFailureEvent\.start: .*missing/,
    );
  });

  it("round-trips instructions and rejects unknown ones", () => {
    const d = {
      cls: "GatherDep",
      stimulus_id: "s",
      worker: "w:1",
      to_gather: ["a", "b"],
      total_nbytes: 3,
    };
    expect(instructionToDict(instructionFromDict(d))).toEqual(d);
    expect(() => instructionFromDict({ cls: "Nope", stimulus_id: "s" })).toThrow(/unknown class/);
  });
});

describe("Dask dict codec for events: fields the state machine does not read", () => {
  it("keeps the time the event was handled (the seed's from_dict sets inst.handled)", () => {
    expect(eventFromDict({ cls: "PauseEvent", stimulus_id: "p", handled: 12.5 }).handled).toBe(
      12.5,
    );
    expect(eventFromDict({ cls: "PauseEvent", stimulus_id: "p" }).handled).toBeNull();
  });

  it("reads a null duration of compute-task as 0 (the seed keeps None; nothing reads it but metrics)", () => {
    const recorded = { ...eventToDict(ComputeTaskEvent.dummy("y", { stimulusId: "s1" })) };
    recorded.duration = null;
    const ev = eventFromDict(recorded) as ComputeTaskEvent;
    expect(ev.duration).toBe(0);
  });
});

describe("events the state machine rejects", () => {
  it("an execution result for an unknown key fails naming the event and the key", () => {
    const ws = new WorkerState({ address: "w:0" });
    const ev = ExecuteSuccessEvent.dummy("ghost", { stimulusId: "done-ghost" });
    let err: unknown;
    try {
      ws.handleStimulus(ev);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AssertionError);
    expect((err as Error).message).toContain(
      'while handling ExecuteSuccessEvent(stimulus_id="done-ghost", key="ghost")',
    );
    expect((err as Error).message).toContain('task "ghost" is unknown');
  });

  it("freeing unknown keys is not an error", () => {
    const ws = new WorkerState({ address: "w:0" });
    expect(ws.handleStimulus(new FreeKeysEvent({ keys: ["nope"], stimulusId: "f" }))).toEqual([]);
    ws.validateState();
  });
});

/** One recorded dict of every instruction class (FORMAT.md). */
const INSTRUCTION_SAMPLES: Record<string, unknown>[] = [
  { cls: "GatherDep", worker: "w:1", to_gather: ["a", "b"], total_nbytes: 3 },
  { cls: "Execute", key: "y" },
  { cls: "RetryBusyWorkerLater", worker: "w:1" },
  { cls: "TaskFinishedMsg", op: "task-finished", key: "y", run_id: 1, nbytes: 8, typename: "int" },
  {
    cls: "TaskErredMsg",
    op: "task-erred",
    key: "y",
    run_id: 1,
    exception_text: "ValueError()",
    traceback_text: "",
  },
  { cls: "ReleaseWorkerDataMsg", op: "release-worker-data", key: "y" },
  { cls: "RescheduleMsg", op: "reschedule", key: "y" },
  { cls: "LongRunningMsg", op: "long-running", key: "y", compute_duration: 0.5 },
  { cls: "AddKeysMsg", op: "add-keys", keys: ["x"] },
  { cls: "RequestRefreshWhoHasMsg", op: "request-refresh-who-has", keys: ["x"] },
  { cls: "StealResponseMsg", op: "steal-response", key: "y", state: "ready" },
].map((d) => ({ ...d, stimulus_id: "s" }));

/** Random edits of valid dicts: decoding gives a value or a DaskDictError, nothing else. */
function decodesOrRefuses(samples: unknown[], decode: (d: unknown) => unknown): void {
  fc.assert(
    fc.property(editedSample(samples), (d) => {
      try {
        decode(d);
      } catch (err) {
        if (!(err instanceof DaskDictError)) {
          throw new Error(`${showValue(d, 200)} raised ${String(err)}`);
        }
      }
    }),
    { numRuns: 3000 },
  );
}

const cyclic: Record<string, unknown> = {};
cyclic.self = cyclic;

describe("Dask dict codec on bad input", () => {
  const events = Object.entries(SAMPLES).map(([cls, f]) => ({ cls, stimulus_id: "s", ...f }));

  it("decodes or refuses with a DaskDictError any edit of a valid event", () => {
    decodesOrRefuses(events, (d) => eventFromDict(d));
  });

  it("decodes or refuses with a DaskDictError any edit of a valid instruction", () => {
    expect(INSTRUCTION_SAMPLES.map((d) => instructionToDict(instructionFromDict(d)))).toEqual(
      INSTRUCTION_SAMPLES,
    );
    decodesOrRefuses(INSTRUCTION_SAMPLES, instructionFromDict);
  });

  it("names values JSON cannot show", () => {
    expect(() => eventFromDict({ cls: 1n, stimulus_id: "s" })).toThrow(
      'event: "cls" must be a string, got "1n"',
    );
    expect(() => instructionFromDict({ cls: Object.create(null) })).toThrow(
      'instruction: "cls" must be a string, got {}',
    );
    expect(() => eventFromDict({ cls: "FreeKeysEvent", stimulus_id: "s", keys: cyclic })).toThrow(
      "FreeKeysEvent.keys: expected a list of strings, got an object ([object Object])",
    );
    expect(() =>
      instructionFromDict({ cls: "StealResponseMsg", stimulus_id: "s", key: "y", state: "done" }),
    ).toThrow(
      /StealResponseMsg\.state: expected a task state \(cancelled, .*\) or null, got string "done"/,
    );
  });
});

describe("Dask dict codec: fields the public vectors always give the same value", () => {
  const compute = { cls: "ComputeTaskEvent", stimulus_id: "s", ...SAMPLES.ComputeTaskEvent };
  const decode = (edit: Record<string, unknown>) =>
    eventFromDict({ ...compute, ...edit }) as ComputeTaskEvent;
  const sampleWithout = (cls: string, field: string): Record<string, unknown> => {
    const d: Record<string, unknown> = { cls, stimulus_id: "s", ...SAMPLES[cls] };
    delete d[field];
    return d;
  };

  it("requires actor and value as every other field, missing being no default", () => {
    expect(() => eventFromDict(sampleWithout("ComputeTaskEvent", "actor"))).toThrow(
      /ComputeTaskEvent\.actor: .*missing/,
    );
    expect(() => eventFromDict(sampleWithout("ExecuteSuccessEvent", "value"))).toThrow(
      /ExecuteSuccessEvent\.value: .*missing/,
    );
  });

  it("refuses an actor flag or annotations of the wrong type, naming the field", () => {
    expect(() => decode({ actor: "true" })).toThrow(
      'ComputeTaskEvent.actor: expected true or false, got string "true"',
    );
    expect(decode({ actor: true }).actor).toBe(true);
    expect(() => decode({ annotations: [1] })).toThrow(DaskDictError);
    expect(() => decode({ annotations: [1] })).toThrow(
      /ComputeTaskEvent\.annotations: expected an object or null/,
    );
  });

  it("reads null resource_restrictions and annotations as none", () => {
    const ev = decode({ resource_restrictions: null, annotations: null });
    expect(ev.resourceRestrictions).toEqual(new Map());
    expect(ev.annotations).toEqual({});
  });

  it("takes a run_spec or a function alone, as the seed's __post_init__ does", () => {
    expect(decode({ run_spec: "spec", function: null }).cls).toBe("ComputeTaskEvent");
    expect(decode({ run_spec: null, function: "f" }).cls).toBe("ComputeTaskEvent");
  });

  it("round-trips a span_id", () => {
    const ev = decode({ span_id: "span-1" });
    expect(ev.spanId).toBe("span-1");
    expect(eventToDict(ev)).toEqual({ ...compute, span_id: "span-1" });
  });

  it("writes a key named __proto__ as an own key of every map", () => {
    const d = {
      ...compute,
      who_has: JSON.parse('{"__proto__": ["w:1"]}'),
      nbytes: JSON.parse('{"__proto__": 7}'),
    };
    const out = eventToDict(eventFromDict(d));
    expect(Object.keys(out.who_has as object)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(out.nbytes)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe(JSON.stringify(d));
  });

  it("refuses a null compute_duration of secede (a float in the seed)", () => {
    expect(() =>
      eventFromDict({ cls: "SecedeEvent", stimulus_id: "s", key: "y", compute_duration: null }),
    ).toThrow("SecedeEvent.compute_duration: expected a number, got null");
  });
});

describe("FieldReader", () => {
  it("reads a missing nullable field as null and refuses one of the wrong type", () => {
    const r = new FieldReader({ n: "1" }, "X");
    expect(r.strOrNull("missing")).toBeNull();
    expect(r.numOrNull("missing")).toBeNull();
    expect(r.dictOrNull("missing")).toBeNull();
    expect(() => r.numOrNull("n")).toThrow('X.n: expected a number or null, got string "1"');
  });
});

describe("recorded values", () => {
  it("decode only when typename is a string and sizeof a number; anything else stays opaque", () => {
    expect(decodeRecordedValue({ typename: "int", sizeof: 28, value: 1 })).toBeInstanceOf(
      RecordedValue,
    );
    const badSize = { typename: "int", sizeof: "28", value: 1 };
    expect(decodeRecordedValue(badSize)).toBe(badSize);
    const noName = { sizeof: 28, value: 1 };
    expect(decodeRecordedValue(noName)).toBe(noName);
  });
});

describe("instruction dicts", () => {
  it("sort sets as Python sorts strings: by code point, a prefix first", () => {
    // U+FFFF is below U+10000 as a code point but above its first UTF-16 unit (U+D800).
    expect(sortedStrings(["b", "ab", "a", "\u{10000}", "\uffff"])).toEqual([
      "a",
      "ab",
      "b",
      "\uffff",
      "\u{10000}",
    ]);
    const gather = instructionFromDict({
      cls: "GatherDep",
      stimulus_id: "s",
      worker: "w:1",
      to_gather: ["\u{10000}", "x", "\uffff", "xy"],
      total_nbytes: 1,
    });
    expect(instructionToDict(gather).to_gather).toEqual(["x", "xy", "\uffff", "\u{10000}"]);
  });

  it("keep the type name of task-finished, not its serialized type", () => {
    const msg = new TaskFinishedMsg("y", 1, 8, "<pickled>", "int", {}, null, [], "s");
    expect(instructionToDict(msg).typename).toBe("int");
  });

  it("round-trip the fields the seed allows to be None", () => {
    const nulls = [
      {
        cls: "TaskFinishedMsg",
        op: "task-finished",
        key: "y",
        run_id: 1,
        nbytes: null,
        typename: "int",
      },
      { cls: "LongRunningMsg", op: "long-running", key: "y", compute_duration: null },
      // The seed's answer to a steal request for a task it does not know.
      { cls: "StealResponseMsg", op: "steal-response", key: "y", state: null },
    ].map((d) => ({ ...d, stimulus_id: "s" }));
    for (const d of nulls) expect(instructionToDict(instructionFromDict(d))).toEqual(d);
  });
});
