import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { KeyError, PyTypeError } from "../util/pyErrors.ts";
import { ComputeTaskEvent } from "../worker/state/events.ts";
import { WorkerState } from "../worker/state/workerState.ts";
import {
  parseVector,
  readMaybeGzip,
  replayVector,
  textLimit,
  workerStateFromConfig,
} from "./conformance.ts";
import { canonical, jsonDiff } from "./conformanceDiff.ts";
import { instructionWithSetsSorted, stateWithSetsSorted } from "./conformanceSets.ts";
import { stateSnapshot } from "./daskJson/snapshot.ts";

const VECTOR = new URL("../../test/vectors/oracle/scenario-resources.json.gz", import.meta.url);

function tampered() {
  const d = JSON.parse(gunzipSync(readFileSync(VECTOR)).toString("utf8"));
  d.steps[2].state.transition_counter = 999;
  return parseVector(JSON.stringify(d), "tampered");
}

describe("replayVector options", () => {
  it("beforeStep sees every step's stimulus before it is handled", () => {
    const v = parseVector(gunzipSync(readFileSync(VECTOR)).toString("utf8"), "vector");
    const seen: [number, string, number][] = [];
    const mismatch = replayVector(v, {
      beforeStep: (ws, ev, i) => seen.push([i, ev.stimulusId, ws.transitionCounter]),
    });
    expect(mismatch).toBeNull();
    expect(seen.map((s) => s[0])).toEqual(v.steps.map((_, i) => i));
    expect(seen.map((s) => s[1])).toEqual(v.steps.map((s) => s.event.stimulus_id));
    // Before the first stimulus, nothing has happened yet.
    expect(seen[0][2]).toBe(0);
  });

  it("compare: false replays to the end without comparing", () => {
    expect(replayVector(tampered())?.step).toBe(2);
    let steps = 0;
    const v = tampered();
    expect(replayVector(v, { compare: false, beforeStep: () => steps++ })).toBeNull();
    expect(steps).toBe(v.steps.length);
  });
});

describe("what a recording's step expects to raise", () => {
  function raisingAtStep1(raises: string) {
    const d = JSON.parse(gunzipSync(readFileSync(VECTOR)).toString("utf8"));
    d.steps[1] = { event: d.steps[1].event, raises };
    return parseVector(JSON.stringify(d), "raises");
  }
  /** Replay with the state machine throwing `err` once it has handled step 1. */
  function throwingAtStep1(raises: string, err: Error) {
    return replayVector(raisingAtStep1(raises), {
      beforeStep: (ws, _event, i) => {
        if (i !== 1) return;
        const handle = ws.handleStimulus.bind(ws);
        ws.handleStimulus = (...events) => {
          Reflect.deleteProperty(ws, "handleStimulus");
          handle(...events);
          throw err;
        };
      },
    });
  }

  it("is met by the port's error of that name", () => {
    expect(throwingAtStep1("TypeError", new PyTypeError("wrong arguments"))).toBeNull();
    expect(throwingAtStep1("KeyError", new KeyError("x"))).toBeNull();
  });

  it("is not met by a TypeError of JavaScript's own, a bug in the port", () => {
    const mismatch = throwingAtStep1("TypeError", new TypeError("Cannot read properties"));
    expect(mismatch?.what).toBe("raises");
    expect(mismatch?.details[0]).toBe(
      "expected TypeError, got a TypeError not of the port's own class (a JavaScript error: a bug)",
    );
  });

  it("of a class the port does not map is met only by an error of that name", () => {
    class ValueError extends Error {
      override name = "ValueError";
    }
    expect(throwingAtStep1("ValueError", new ValueError("bad"))).toBeNull();
    expect(throwingAtStep1("ValueError", new KeyError("x"))?.details[0]).toBe(
      "expected ValueError, got KeyError",
    );
  });

  it("is not met by another class of the same name", () => {
    class AssertionError extends Error {
      override name = "AssertionError";
    }
    expect(throwingAtStep1("AssertionError", new AssertionError("node:assert"))?.what).toBe(
      "raises",
    );
  });
});

describe("a vector's config", () => {
  const text = gunzipSync(readFileSync(VECTOR)).toString("utf8");

  it("with a name FORMAT.md does not give is a broken vector, not ignored", () => {
    const d = JSON.parse(text);
    d.config.nthread = 4;
    expect(() => replayVector(parseVector(JSON.stringify(d), "typo"))).toThrow(
      /config\.nthread: not an attribute the conformance format sets/,
    );
    const e = JSON.parse(text);
    e.steps[2].config_before = { transfer_incoming_count_limt: 1 };
    expect(() => replayVector(parseVector(JSON.stringify(e), "typo"))).toThrow(
      /steps\[2\]\.config_before\.transfer_incoming_count_limt: not an attribute/,
    );
  });

  it("may carry data_type, which is informational", () => {
    const d = JSON.parse(text);
    d.config.data_type = "dict";
    expect(replayVector(parseVector(JSON.stringify(d), "data_type"))).toBeNull();
  });
});

describe("sets in a recording", () => {
  // Keys that were tuples in Python are recorded as their str(); a recording may have
  // sorted them as tuples, where ('x', 9) comes before ('x', 10).
  const X9 = "('x', 9)";
  const X10 = "('x', 10)";
  const PEER = "127.0.0.1:2";
  const config = {
    nthreads: 1,
    address: "127.0.0.1:1",
    resources: {},
    transfer_incoming_count_limit: 10,
    transfer_incoming_bytes_limit: null,
    transfer_message_bytes_limit: null,
    transfer_incoming_bytes_throttle_threshold: 10_000_000,
    validate: true,
    transition_counter_max: false,
  };
  const event = {
    cls: "ComputeTaskEvent",
    stimulus_id: "s1",
    key: "('y', 0)",
    run_id: 0,
    who_has: { [X10]: [PEER], [X9]: [PEER] },
    nbytes: { [X10]: 1, [X9]: 1 },
    priority: [0],
    duration: 1,
    run_spec: null,
    function: null,
    args: null,
    kwargs: null,
    resource_restrictions: {},
    actor: false,
    annotations: {},
    span_id: null,
  };

  /** What the port records for the step, with every set of the two keys in tuple order. */
  function recordedInTupleOrder(): Record<string, unknown> {
    const tupleOrder = [X9, X10];
    return {
      event,
      instructions: [
        {
          cls: "GatherDep",
          stimulus_id: "s1",
          worker: PEER,
          to_gather: tupleOrder,
          total_nbytes: 2,
        },
      ],
      state: {
        tasks: {
          [X10]: task("flight", ["('y', 0)"], PEER),
          [X9]: task("flight", ["('y', 0)"], PEER),
          "('y', 0)": {
            ...task("waiting", [], null),
            run_id: 0,
            dependencies: tupleOrder,
            waiting_for_data: tupleOrder,
            nbytes: null,
            who_has: [],
            waiters: [],
          },
        },
        ready: [],
        constrained: [],
        waiting: ["('y', 0)"],
        executing: [],
        long_running: [],
        in_flight_tasks: tupleOrder,
        in_flight_workers: { [PEER]: tupleOrder },
        missing_dep_flight: [],
        busy_workers: [],
        data_needed: {},
        has_what: { [PEER]: tupleOrder },
        data: [],
        actors: [],
        fetch_count: 0,
        transfer_incoming_bytes: 2,
        transfer_incoming_count_total: 1,
        nbytes: 0,
        executed_count: 0,
        generation: -1,
        running: true,
        available_resources: {},
        transition_counter: 5,
      },
    };
  }

  function task(state: string, dependents: string[], comingFrom: string | null) {
    return {
      state,
      previous: null,
      next: null,
      done: false,
      priority: [0, 0],
      run_id: -1,
      nbytes: 1,
      who_has: [PEER],
      dependencies: [],
      dependents,
      waiting_for_data: [],
      waiters: dependents,
      coming_from: comingFrom,
      resource_restrictions: {},
      exception_text: "",
    };
  }

  it("compare as sets, whatever order the recording sorted them in", () => {
    const step = recordedInTupleOrder();
    const v = parseVector(JSON.stringify({ name: "tuples", config, steps: [step] }), "tuples");
    expect(replayVector(v)).toBeNull();
  });

  it("still differ when an element differs", () => {
    const step = recordedInTupleOrder() as { state: { in_flight_tasks: string[] } };
    step.state.in_flight_tasks = [X9, "('x', 11)"];
    const v = parseVector(JSON.stringify({ name: "tuples", config, steps: [step] }), "tuples");
    const mismatch = replayVector(v);
    expect(mismatch?.what).toBe("state");
    // The diff shows both sides sorted by code point.
    expect(mismatch?.details).toEqual([
      `.in_flight_tasks: expected ["('x', 11)","${X9}"], got ["${X10}","${X9}"]`,
    ]);
  });
});

describe("keys named like Object.prototype's own", () => {
  it("a key __proto__ is compared as any other, in the diff and the snapshot", () => {
    const expected = JSON.parse(
      '{"tasks": {"__proto__": {"state": "error"}, "y": {"state": "memory"}}}',
    );
    const actual = JSON.parse(
      '{"tasks": {"__proto__": {"state": "memory"}, "y": {"state": "memory"}}}',
    );
    expect(jsonDiff(expected, actual)).toEqual([
      '.tasks.__proto__.state: expected "error", got "memory"',
    ]);
    expect(jsonDiff(expected, { tasks: { y: { state: "memory" } } })).toEqual([
      '.tasks.__proto__: expected {"state":"error"}, missing',
    ]);
    expect(canonical(expected)).toContain('"__proto__":{"state":"error"}');
    const ws = new WorkerState({ address: "tcp://127.0.0.1:1", validate: true });
    ws.handleStimulus(ComputeTaskEvent.dummy("__proto__", { stimulusId: "s1" }));
    const snapshot = stateSnapshot(ws) as { tasks: Record<string, unknown> };
    expect(Object.keys(snapshot.tasks)).toEqual(["__proto__"]);
    // Keys that are Object.prototype's members are missing when missing, not undefined.
    expect(jsonDiff({ constructor: 1 }, {})).toEqual([".constructor: expected 1, missing"]);
  });
});

describe("a broken vector file", () => {
  it("is refused with a DaskDictError naming the top-level field without a leading dot", () => {
    expect(() => parseVector(JSON.stringify({ config: {}, steps: 5 }), "v.json")).toThrow(
      "v.json: steps: expected a list, got number 5",
    );
    expect(() => parseVector(JSON.stringify({ steps: [] }), "v.json")).toThrow(
      "v.json: config: expected a value (the field is missing), got nothing",
    );
  });

  it("is refused when a step's instructions are not objects", () => {
    const step = { event: { cls: "PauseEvent", stimulus_id: "s" }, instructions: [1], state: {} };
    expect(() => parseVector(JSON.stringify({ config: {}, steps: [step] }), "v.json")).toThrow(
      "v.json: steps[0].instructions: expected a list of objects, got a list ([1])",
    );
  });
});

describe("a vector's config, field by field", () => {
  it("defaults as the seed's WorkerState does: one thread, validating", () => {
    const ws = workerStateFromConfig({}, "config");
    expect(ws.nthreads).toBe(1);
    expect(ws.validate).toBe(true);
  });

  it("replaces the resource maps it gives rather than merging them", () => {
    const ws = workerStateFromConfig(
      { resources: { A: 2, B: 1 }, available_resources: { A: 1 }, total_resources: { A: 3 } },
      "config",
    );
    expect(ws.availableResources).toEqual(new Map([["A", 1]]));
    expect(ws.totalResources).toEqual(new Map([["A", 3]]));
  });

  it("reads a transition_counter_max of false or null as no limit", () => {
    for (const max of [false, null]) {
      const ws = workerStateFromConfig({ transition_counter_max: 5 }, "config");
      expect(ws.transitionCounterMax).toBe(5);
      expect(
        workerStateFromConfig({ transition_counter_max: max }, "config").transitionCounterMax,
      ).toBe(false);
    }
  });
});

describe("a snapshot", () => {
  it("writes an infinite resource restriction as null, as FORMAT.md writes infinity", () => {
    const ws = new WorkerState({ address: "w:0", resources: new Map([["A", 1]]) });
    const restrictions = new Map([["A", Number.POSITIVE_INFINITY]]);
    ws.handleStimulus(
      ComputeTaskEvent.dummy("y", { stimulusId: "s1", resourceRestrictions: restrictions }),
    );
    const snapshot = stateSnapshot(ws) as { tasks: Record<string, Record<string, unknown>> };
    expect(snapshot.tasks.y.resource_restrictions).toEqual({ A: null });
  });
});

describe("re-sorting a recording's sets", () => {
  const tupleOrder = ["('x', 9)", "('x', 10)"];
  const codePointOrder = ["('x', 10)", "('x', 9)"];

  it("sorts every set FORMAT.md lists, and leaves pop order and priorities alone", () => {
    const task = {
      priority: [0, 10, 9],
      who_has: tupleOrder,
      dependencies: tupleOrder,
      dependents: tupleOrder,
      waiting_for_data: tupleOrder,
      waiters: tupleOrder,
    };
    const state = {
      tasks: { t: task },
      ready: tupleOrder,
      constrained: tupleOrder,
      ...Object.fromEntries(
        [
          "waiting",
          "executing",
          "long_running",
          "in_flight_tasks",
          "missing_dep_flight",
          "busy_workers",
          "data",
          "actors",
        ].map((f) => [f, tupleOrder]),
      ),
      ...Object.fromEntries(
        ["in_flight_workers", "data_needed", "has_what"].map((f) => [f, { w: tupleOrder }]),
      ),
    };
    const sorted = stateWithSetsSorted(state);
    expect(sorted).toEqual({
      ...Object.fromEntries(
        Object.entries(state).map(([f, v]) => [
          f,
          Array.isArray(v) ? codePointOrder : { w: codePointOrder },
        ]),
      ),
      tasks: {
        t: {
          priority: [0, 10, 9],
          ...Object.fromEntries(
            Object.keys(task)
              .slice(1)
              .map((f) => [f, codePointOrder]),
          ),
        },
      },
      ready: tupleOrder,
      constrained: tupleOrder,
    });
    expect(instructionWithSetsSorted({ cls: "AddKeysMsg", keys: tupleOrder })).toEqual({
      cls: "AddKeysMsg",
      keys: codePointOrder,
    });
    expect(instructionWithSetsSorted({ cls: "GatherDep", to_gather: tupleOrder })).toEqual({
      cls: "GatherDep",
      to_gather: codePointOrder,
    });
  });

  it("leaves a list that is not all strings as it is, for the diff to show", () => {
    const odd = ["b", "a", null];
    expect(stateWithSetsSorted({ data: odd }).data).toEqual(odd);
    expect(instructionWithSetsSorted({ keys: odd }).keys).toEqual(odd);
  });
});

describe("readMaybeGzip", () => {
  it("refuses more text than it can read, as soon as the gunzip passes it", () => {
    // A gzip bomb: 3 GB of zeros are 13 MB gzipped; gunzipped whole (6 GB of memory),
    // they were called an empty stream, and text beyond a string's 512 MiB failed with
    // V8's own words.
    const dir = mkdtempSync(join(tmpdir(), "weft-read-text-"));
    try {
      const gz = join(dir, "bomb.jsonl.gz");
      const plain = join(dir, "big.json");
      writeFileSync(gz, gzipSync(Buffer.alloc(1_000_000, 0x20)));
      writeFileSync(plain, Buffer.alloc(200_000, 0x20));
      expect(() => readMaybeGzip(gz, 100_000)).toThrow(
        /^too large to read here: .* of gzip data gunzip to more than the 97\.66 kiB this process has the heap to replay; give node more \(NODE_OPTIONS=--max-old-space-size=MB\)$/,
      );
      expect(() => readMaybeGzip(plain, 100_000)).toThrow(
        /^too large to read here: 195\.31 kiB of text is more than the 97\.66 kiB this process/,
      );
      expect(readMaybeGzip(gz, 1_000_000)).toHaveLength(1_000_000);
      expect(readMaybeGzip(plain, 200_000)).toHaveLength(200_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(textLimit()).toBeGreaterThan(0);
    expect(textLimit()).toBeLessThanOrEqual(0x1fffffe8);
  });
});
