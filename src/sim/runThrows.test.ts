import { describe, expect, it } from "vitest";
import { NO_FAULTS } from "./faults.ts";
import type { SimHooks } from "./hooks.ts";
import { runSeeds } from "./runMany.ts";
import { Simulation, simulate } from "./simulation.ts";

const base = { seed: 3, workers: 2, tasks: 12, faults: NO_FAULTS } as const;

describe("a throw of a caller's callback in a simulated run", () => {
  const baseline = simulate(base);

  it.each([
    [
      "schedulerStimulus",
      {
        schedulerStimulus: () => {
          throw new Error("boom");
        },
      },
    ],
    [
      "schedulerMessage",
      {
        schedulerMessage: () => {
          throw new Error("boom");
        },
      },
    ],
    [
      "workerEvent",
      {
        workerEvent: () => {
          throw new Error("boom");
        },
      },
    ],
    [
      "taskValue",
      {
        taskValue: () => {
          throw new Error("boom");
        },
      },
    ],
    [
      "afterScheduler",
      {
        afterScheduler: () => {
          throw "boom";
        },
      },
    ],
  ] as [string, SimHooks][])(
    "a %s hook that throws is the run's failure (raised), in its result; later runs are unaffected",
    (name, hooks) => {
      // Before, the hook's error escaped run(), which says a failure is in the result.
      const r = simulate({ ...base, hooks });
      expect(r.ok).toBe(false);
      expect(r.failure?.kind).toBe("raised");
      expect(r.failure?.message).toContain(`the ${name} hook threw: boom`);
      const again = simulate(base);
      expect(again.ok).toBe(true);
      expect(again.stats).toEqual(baseline.stats);
    },
  );

  it("a hook whose throw cannot be read (a Proxy) is a failure all the same", () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("trap");
        },
        getPrototypeOf() {
          throw new Error("trap");
        },
      },
    );
    const r = simulate({
      ...base,
      hooks: {
        afterScheduler: () => {
          throw hostile;
        },
      },
    });
    expect(r.failure?.kind).toBe("raised");
    expect(r.failure?.message).toContain("the afterScheduler hook threw:");
  });

  it("a run ran is not run again: run() returns its result again", () => {
    const sim = new Simulation(base);
    const r = sim.run();
    expect(sim.run()).toBe(r);
  });

  it("what onProgress throws ends the run and is rethrown; a later run() says the run was ended", () => {
    const sim = new Simulation(base);
    expect(() =>
      sim.run(() => {
        throw new Error("stop");
      }),
    ).toThrow("stop");
    // Before, it set the cluster up a second time over the first, half-run one.
    expect(() => sim.run()).toThrow(/this simulation's run was ended by a throw/);
    expect(simulate(base).stats).toEqual(baseline.stats);
  });

  it("what runSeeds's onResult throws ends the runs and is rethrown", () => {
    const seen: number[] = [];
    expect(() =>
      runSeeds({ workers: 2, tasks: 8, faults: NO_FAULTS }, 1, 5, (r) => {
        seen.push(r.seed);
        if (r.seed === 2) throw new Error("enough");
      }),
    ).toThrow("enough");
    expect(seen).toEqual([1, 2]);
  });

  it("a promise onProgress or onResult returns that rejects is a process warning, once, the runs going on", async () => {
    const seen: Error[] = [];
    const onWarning = (w: Error) => seen.push(w);
    process.on("warning", onWarning);
    try {
      // Before, each rejection was unhandled, which ends a Node.js process.
      let progress = 0;
      const r = new Simulation({ seed: 1, workers: 2, tasks: 600, faults: NO_FAULTS }).run(
        async () => {
          progress++;
          throw new Error("no bar");
        },
      );
      expect(r.ok).toBe(true);
      expect(progress).toBeGreaterThan(1);
      const results: number[] = [];
      const summary = runSeeds({ workers: 2, tasks: 8, faults: NO_FAULTS }, 1, 3, async (x) => {
        results.push(x.seed);
        throw new Error("no table");
      });
      expect([summary.runs, results]).toEqual([3, [1, 2, 3]]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(seen.map((w) => [w.name, w.message])).toEqual([
        ["WeftCallbackWarning", "Simulation.run: onProgress failed: Error: no bar"],
        ["WeftCallbackWarning", "runSeeds: onResult failed: Error: no table"],
      ]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
