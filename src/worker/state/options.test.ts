import { describe, expect, it } from "vitest";
import { PyRandom } from "../../util/mt19937.ts";
import { sizeof, typeName } from "../../util/sizeof.ts";
import { errorMessage } from "./errorMessage.ts";
import { ComputeTaskEvent, ExecuteSuccessEvent, UpdateDataEvent } from "./events.ts";
import { TaskFinishedMsg } from "./instructions.ts";
import { SAFE_SIZEOF_DEFAULT } from "./safeServices.ts";
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

  it("defaults as docs/worker-state.md's table says (the seed's, and a pure core's services)", () => {
    const ws = new WorkerState();
    expect(() => ws.address).toThrow("address has not been set");
    expect(ws.nthreads).toBe(1);
    expect(ws.totalResources).toEqual(new Map());
    expect([ws.data, ws.threads, ws.plugins]).toEqual([new Map(), new Map(), new Map()]);
    expect(ws.validate).toBe(true);
    expect(ws.transferIncomingCountLimit).toBe(9999);
    expect(ws.transferIncomingBytesLimit).toBe(Number.POSITIVE_INFINITY);
    expect(ws.transferMessageBytesLimit).toBe(Number.POSITIVE_INFINITY);
    expect(ws.transitionCounterMax).toBe(false);
    expect(ws.clock()).toBe(0);
    const seeded = new PyRandom(0);
    expect([ws.rng.random(), ws.rng.random()]).toEqual([seeded.random(), seeded.random()]);
    expect([ws.sizeof, ws.typeName, ws.errorMessage]).toEqual([sizeof, typeName, errorMessage]);
    // A plugin's failing hook is ignored when no onPluginError is given.
    const plugged = new WorkerState({
      address: "127.0.0.1:1",
      plugins: new Map([
        [
          "bad",
          {
            transition: () => {
              throw new Error("plugin bug");
            },
          },
        ],
      ]),
    });
    plugged.handleStimulus(ComputeTaskEvent.dummy("x", { stimulusId: "s1" }));
    plugged.handleStimulus(ExecuteSuccessEvent.dummy("x", { value: 1, stimulusId: "s2" }));
    expect(plugged.tasks.get("x")?.state).toBe("memory");
    // The clock reads 0: every log record is stamped 0.
    expect(plugged.story("x").map((r) => r[r.length - 1])).toEqual([0, 0, 0, 0, 0, 0]);
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

  it("a given sizeof or typeName that throws is Dask's safe_sizeof (1e6 bytes) and the default type name: the task enters memory whole", () => {
    const throws = () => {
      throw new Error("cannot size");
    };
    const ws = new WorkerState({ sizeof: throws, typeName: throws, validate: true });
    // Before, the throw left x in memory without a size, and the stimulus half handled.
    ws.handleStimulus(new UpdateDataEvent({ data: { x: [1, 2] }, stimulusId: "s1" }));
    expect(ws.tasks.get("x")?.state).toBe("memory");
    expect(ws.tasks.get("x")?.nbytes).toBe(SAFE_SIZEOF_DEFAULT);
    expect(ws.tasks.get("x")?.type).toBe("Array");
    expect(ws.nbytes).toBe(SAFE_SIZEOF_DEFAULT);
    ws.validateState();
    ws.address = "127.0.0.1:1";
    ws.handleStimulus(ComputeTaskEvent.dummy("y", { stimulusId: "s2" }));
    const out = ws.handleStimulus(ExecuteSuccessEvent.dummy("y", { value: "v", stimulusId: "s3" }));
    const finished = out.find((i) => i instanceof TaskFinishedMsg) as TaskFinishedMsg | undefined;
    expect(finished?.typename).toBe("string");
    ws.validateState();
  });
});
