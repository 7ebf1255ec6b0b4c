/** The limits resolveSimOptions puts on a run's options, at their edges. */

import { expect, test } from "vitest";
import { DEFAULT_FAULT_RATES } from "./faults.ts";
import { MAX_SIM_TASKS, MAX_SIM_WORKERS, resolveSimOptions, SIM_DEFAULTS } from "./options.ts";

test("the most tasks a workload may build is allowed, one more is not", () => {
  // A map of n builds about 2n tasks.
  expect(resolveSimOptions({ seed: 1, workload: "map", tasks: MAX_SIM_TASKS / 2 }).tasks).toBe(
    MAX_SIM_TASKS / 2,
  );
  expect(() =>
    resolveSimOptions({ seed: 1, workload: "map", tasks: MAX_SIM_TASKS / 2 + 1 }),
  ).toThrow(/^tasks: a map workload of 2000001 builds about 4000002 tasks; at most 4000000 /);
});

test("the most workers a cluster may start with is allowed, one more is not", () => {
  expect(resolveSimOptions({ seed: 1, workers: MAX_SIM_WORKERS }).workers).toBe(MAX_SIM_WORKERS);
  expect(() => resolveSimOptions({ seed: 1, workers: MAX_SIM_WORKERS + 1 })).toThrow(
    /^workers must be at most 10000, got 10001 /,
  );
});

test("rounds of work stealing and of the memory manager are at least a millisecond apart", () => {
  for (const name of ["workStealingInterval", "activeMemoryManagerInterval"] as const) {
    expect(resolveSimOptions({ seed: 1, [name]: 0.001 })[name]).toBe(0.001);
    // A round every nanosecond filled the run's 5,000,000 events: a "livelock".
    expect(() => resolveSimOptions({ seed: 1, [name]: 1e-9 })).toThrow(
      `${name} must be at least 0.001 (a millisecond, a real scheduler's least), got 1e-9`,
    );
  }
});

test("a heartbeat timeout no longer than the interval is refused", () => {
  expect(() => resolveSimOptions({ seed: 1, heartbeatInterval: 1, heartbeatTimeout: 1 })).toThrow(
    "heartbeatTimeout must exceed heartbeatInterval",
  );
  expect(
    resolveSimOptions({ seed: 1, heartbeatInterval: 1, heartbeatTimeout: 1.5 }).heartbeatTimeout,
  ).toBe(1.5);
});

test("a latency above a thirtieth of the stall timeout is refused, even when heartbeats allow it", () => {
  // 0.5 s is at most half of the 2 s heartbeat timeout, but the no-progress window of
  // 10 s would close on messages still in flight.
  expect(() => resolveSimOptions({ seed: 1, latency: 0.5, stallTimeout: 10 })).toThrow(
    /^latency must be at most stallTimeout \/ 30 \(0\.333\d* s\), got 0\.5: /,
  );
  expect(resolveSimOptions({ seed: 1, latency: 0.5, stallTimeout: 15 }).latency).toBe(0.5);
});

test("the defaults are docs/sim.md's, and a bad option is a RangeError naming it", () => {
  const { faults, hooks, ...rest } = SIM_DEFAULTS;
  expect(faults).toEqual(DEFAULT_FAULT_RATES);
  expect(hooks).toBeNull();
  expect(rest).toEqual({
    workers: 4,
    maxThreads: 2,
    workload: "random",
    tasks: 40,
    validate: true,
    validateEvery: "auto",
    workStealing: true,
    workStealingInterval: 0.1,
    activeMemoryManager: true,
    activeMemoryManagerInterval: 2,
    releasePhase: true,
    variant: "",
    outgoingLimit: 2,
    incomingLimit: 4,
    latency: 0.002,
    bandwidth: 100e6,
    heartbeatInterval: 0.5,
    heartbeatTimeout: 2,
    findMissingInterval: 1,
    retryBusyDelay: 0.15,
    replaceDelay: 1,
    allowedFailures: 3,
    replicate: 0.5,
    replicateOne: 1 / 3,
    rebalance: 0.25,
    retire: 0.1,
    fireAndForget: 0.15,
    restart: 0.05,
    restartWorker: 0.05,
    actors: 0.1,
    stallTimeout: 60,
    maxEvents: 5_000_000,
    maxTime: 3_600,
  });
  expect(() => resolveSimOptions({ seed: 1, workers: 0 })).toThrow(RangeError);
  expect(() => resolveSimOptions({ seed: 1, replicate: 2 })).toThrow(/replicate/);
});

test("an unknown option is refused, naming the one it likely misspells", () => {
  // Kept in a variable, or from JavaScript, `workers` misspelt ran 4 workers unsaid.
  const options = { seed: 1, worker: 8 };
  expect(() => resolveSimOptions(options)).toThrow(
    new TypeError('simulate: unknown option "worker" (did you mean workers?)'),
  );
});

test("a switch that is not a boolean is refused, not taken for on", () => {
  for (const name of ["validate", "workStealing", "activeMemoryManager", "releasePhase"]) {
    expect(() => resolveSimOptions({ seed: 1, [name]: "false" })).toThrow(
      new TypeError(`${name} must be a boolean, got "false"`),
    );
  }
});

test("faults must be an object of known faults; hooks an object", () => {
  expect(() => resolveSimOptions({ seed: 1, faults: null as never })).toThrow(
    /^faults must be an object of rates by fault \(parseFaults\(spec\) makes one\), got null$/,
  );
  expect(() =>
    resolveSimOptions({ seed: 1, faults: { ...DEFAULT_FAULT_RATES, deaht: 1 } as never }),
  ).toThrow(new TypeError('faults: unknown option "deaht" (did you mean death?)'));
  expect(() => resolveSimOptions({ seed: 1, hooks: 5 as never })).toThrow(
    new TypeError("hooks must be an object of hook functions, got 5"),
  );
  // A result's options hold hooks: null, and may be passed back.
  expect(resolveSimOptions({ seed: 1, hooks: null as never }).hooks).toBe(null);
});

test("a number given as text, or options that are no object, are a TypeError naming them", () => {
  // "5" was refused as "tasks must be an integer ≥ 1, got 5": out of range, it seemed.
  expect(() => resolveSimOptions({ seed: 1, tasks: "5" } as never)).toThrow(
    new TypeError('tasks must be a number, got "5"'),
  );
  expect(() => resolveSimOptions({ seed: "1" } as never)).toThrow(
    new TypeError('seed must be a number, got "1"'),
  );
  expect(() => resolveSimOptions({ seed: 1, latency: "0.01" } as never)).toThrow(
    new TypeError('latency must be a number, got "0.01"'),
  );
  expect(() =>
    resolveSimOptions({ seed: 1, faults: { ...DEFAULT_FAULT_RATES, death: "2" } } as never),
  ).toThrow(new TypeError('faults.death must be a number, got "2"'));
  expect(() => resolveSimOptions(null as never)).toThrow(
    new TypeError("simulate: the options must be an object with a seed, got null"),
  );
});
