import { describe, expect, it } from "vitest";
import { WorkerState } from "./workerState.ts";

describe("WorkerState options", () => {
  it("accepts what the seed's constructor takes", () => {
    const ws = new WorkerState({
      address: "127.0.0.1:1",
      nthreads: 0,
      resources: new Map([["GPU", 0.5]]),
      transferIncomingCountLimit: 0,
      transferIncomingBytesLimit: Number.POSITIVE_INFINITY,
      transferMessageBytesLimit: 2.5e6 + 0.5,
      transitionCounterMax: false,
      validate: false,
      clock: () => 1,
      rng: { random: () => 0.5 },
      data: new Map(),
    });
    expect(ws.nthreads).toBe(0);
    expect(new WorkerState({ resources: { GPU: 2 }, transitionCounterMax: 0 }).nthreads).toBe(1);
    // null is absent, as the defaults (`??`) take it.
    const defaults = new WorkerState({ nthreads: null, transferMessageBytesLimit: null } as never);
    expect(defaults.nthreads).toBe(1);
    expect(defaults.transferMessageBytesLimit).toBe(Number.POSITIVE_INFINITY);
  });

  it.each([
    [{ nthreads: -1 }, "WorkerState: nthreads must be an integer ≥ 0, got -1"],
    [{ nthreads: 1.5 }, "nthreads must be an integer ≥ 0, got 1.5"],
    [{ nthreads: "4" }, 'nthreads must be an integer ≥ 0, got "4"'],
    [{ nthreads: Number.NaN }, "nthreads must be an integer ≥ 0, got NaN"],
    [{ address: 7 }, "address must be a string, got 7"],
    [{ resources: "GPU" }, 'resources must be {name: amount}, got "GPU"'],
    [{ resources: { GPU: -1 } }, 'resources["GPU"] must be a finite number ≥ 0, got -1'],
    [{ resources: new Map([["GPU", "2"]]) }, 'resources["GPU"] must be a finite number ≥ 0'],
    [{ transferIncomingCountLimit: -1 }, "transferIncomingCountLimit must be an integer ≥ 0"],
    [{ transferIncomingBytesLimit: Number.NaN }, "transferIncomingBytesLimit must be"],
    [{ transferMessageBytesLimit: -5 }, "transferMessageBytesLimit must be"],
    [{ transitionCounterMax: true }, "transitionCounterMax must be false or an integer ≥ 0"],
    [{ validate: "yes" }, 'validate must be a boolean, got "yes"'],
    [{ clock: 0 }, "clock must be a function, got 0"],
    [{ rng: Math.random }, "rng must be an object with a random() method"],
    [{ data: {} }, "data must be a Map-like store (has, get, set, delete, keys)"],
    [{ plugins: {} }, "plugins must be a Map"],
    [[], "the options must be an object, got []"],
    [{ nthraeds: 2 }, 'WorkerState: unknown option "nthraeds" (did you mean nthreads?)'],
    [{ transfer_incoming_count_limit: 4 }, 'unknown option "transfer_incoming_count_limit"'],
  ])("refuses %o", (options, message) => {
    expect(() => new WorkerState(options as never)).toThrow(TypeError);
    expect(() => new WorkerState(options as never)).toThrow(message);
  });
});
