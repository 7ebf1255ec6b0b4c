/**
 * The `configured` workload: Dask's canonical root-ish tasks with an input, many
 * `load-i` tasks each reading one small `config` task, then sums of them. It is
 * the one workload whose root-ish tasks wait in `queued` with an input in memory,
 * and leave it otherwise than to run: their input lost (back to waiting), their
 * scattered input lost for good (cancelled: forgotten), the cluster restarted
 * (forgotten), nothing wanting them any more (released). These runs check, with
 * validation on, that this path is taken and comes out right.
 */

import { describe, expect, test } from "vitest";
import type { SchedulerTaskStateName } from "../scheduler/state/taskState.ts";
import { configuredGraph } from "./benchmarkGraphs.ts";
import { resolveSimOptions, type SimOptions } from "./options.ts";
import { formatFailure } from "./report.ts";
import { SimRng } from "./rng.ts";
import { Simulation } from "./simulation.ts";
import { SCATTERED_CONFIG, workloadFor } from "./workloadFor.ts";

/** What a run's queued tasks with inputs did, from the scheduler's transitions. */
interface QueueCounts {
  /** Runs whose client scattered `config`. */
  scatteredRuns: number;
  /** Transitions from `queued` to anything but `processing` in those runs, by where they ended. */
  scatteredLeftTo: Partial<Record<SchedulerTaskStateName, number>>;
  /** Transitions into `queued` of a task with at least one dependency. */
  enteredWithInputs: number;
  /** Transitions from `queued` to `processing` of such a task: sent with where its inputs are. */
  sentWithInputs: number;
  /** Transitions from `queued` to anything but `processing`. */
  left: number;
  /** Those by where the task was at the end of the stimulus (`waiting`, `forgotten`, …). */
  leftTo: Partial<Record<SchedulerTaskStateName, number>>;
}

function emptyCounts(): QueueCounts {
  return {
    scatteredRuns: 0,
    scatteredLeftTo: {},
    enteredWithInputs: 0,
    sentWithInputs: 0,
    left: 0,
    leftTo: {},
  };
}

function addTo(
  total: Partial<Record<SchedulerTaskStateName, number>>,
  c: Partial<Record<SchedulerTaskStateName, number>>,
): void {
  for (const [state, n] of Object.entries(c)) {
    const s = state as SchedulerTaskStateName;
    total[s] = (total[s] ?? 0) + n;
  }
}

function addCounts(total: QueueCounts, c: QueueCounts): void {
  total.scatteredRuns += c.scatteredRuns;
  addTo(total.scatteredLeftTo, c.scatteredLeftTo);
  total.enteredWithInputs += c.enteredWithInputs;
  total.sentWithInputs += c.sentWithInputs;
  total.left += c.left;
  addTo(total.leftTo, c.leftTo);
}

/**
 * Run `options` with a scheduler plugin that counts what its queued tasks did.
 * A plugin only reads (one call per record of the transition log): the run is
 * the one it is without it, event for event.
 */
function runCounted(options: SimOptions): QueueCounts {
  const sim = new Simulation(options);
  const s = sim.scheduler.state;
  const counts = emptyCounts();
  // The tasks that left `queued` in the stimulus being handled, and where they are now:
  // a move that is not in the transition table goes through `released`.
  let stimulus = "";
  const leaving = new Map<string, SchedulerTaskStateName>();
  const settle = (): void => {
    for (const state of leaving.values()) counts.leftTo[state] = (counts.leftTo[state] ?? 0) + 1;
    leaving.clear();
  };
  s.plugins.set("queue-counts", {
    transition(key, start, finish, stimulusId) {
      if (stimulusId !== stimulus) {
        settle();
        stimulus = stimulusId;
      }
      const inputs = (s.tasks.get(key)?.dependencies.size ?? 0) > 0;
      if (finish === "queued" && inputs) counts.enteredWithInputs++;
      if (start === "queued" && finish === "processing" && inputs) counts.sentWithInputs++;
      if (start === "queued" && finish !== "processing") {
        counts.left++;
        leaving.set(key, finish);
      } else if (leaving.has(key)) {
        leaving.set(key, finish);
      }
    },
  });
  let error: unknown = null;
  s.onPluginError = (_name, err) => {
    error ??= err;
  };
  const r = sim.run();
  settle();
  expect(error).toBeNull();
  expect(r.ok, r.ok ? "" : formatFailure(r)).toBe(true);
  if (sim.scatter !== null) {
    counts.scatteredRuns = 1;
    addTo(counts.scatteredLeftTo, counts.leftTo);
  }
  return counts;
}

/** Seeds `from`..`from + n - 1` of the `configured` workload with `options`, counted. */
function runSeeds(options: Omit<SimOptions, "seed">, from: number, n: number): QueueCounts {
  const total = emptyCounts();
  for (let seed = from; seed < from + n; seed++) {
    addCounts(total, runCounted({ seed, workload: "configured", ...options }));
  }
  return total;
}

describe("the configured workload", () => {
  test("one config, loads reading it, sums of four loads, and their total; config scattered in a third of the runs", () => {
    const w = configuredGraph(10);
    expect(w.name).toBe("configured(10)");
    expect(w.tasks.map((t) => t.key)).toEqual([
      "config",
      ...Array.from({ length: 10 }, (_, i) => `load-${i}`),
      "sum-0",
      "sum-1",
      "sum-2",
      "total",
    ]);
    for (let i = 1; i <= 10; i++) expect(w.tasks[i].deps).toEqual([0]);
    expect(w.tasks[11].deps).toEqual([1, 2, 3, 4]);
    expect(w.tasks[13].deps).toEqual([9, 10]);
    expect(w.tasks[14].deps).toEqual([11, 12, 13]);
    expect(w.wanted).toEqual([11, 12, 13, 14]);
    // With config scattered: the same graph, config data the client scatters.
    const scattered = configuredGraph(10, true);
    expect(scattered.name).toBe("configured(10, config scattered)");
    expect(scattered.tasks[0]).toMatchObject({ key: "config", deps: [], scattered: true });
    expect(scattered.tasks.slice(1)).toEqual(w.tasks.slice(1));
    expect(scattered.wanted).toEqual(w.wanted);
    // Sized by --tasks (its loads), as map; one draw of the workload's stream scatters config.
    const o = resolveSimOptions({ seed: 1, workload: "configured" });
    let withScattered = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const built = workloadFor(o, new SimRng(seed));
      const isScattered = built.tasks[0].scattered === true;
      if (isScattered) withScattered++;
      expect(built).toEqual(configuredGraph(40, isScattered));
    }
    expect(Math.abs(withScattered / 300 - SCATTERED_CONFIG)).toBeLessThan(0.08);
    // mix does not draw it: mix's seeds replay as before it came.
    for (let seed = 1; seed <= 200; seed++) {
      const mix = resolveSimOptions({ seed, workload: "mix" });
      expect(workloadFor(mix, new SimRng(seed)).name).not.toMatch(/^configured/);
    }
  });

  // Each set of options runs 40 seeds with the default faults and validation on (10 of
  // them scatter config). The counts (tasks 40 and 60, seeds 1..40) were, per set:
  // entered with inputs 1169, 1958, 1198, 2339; left otherwise than to processing 40,
  // 66, 48, 158; of those, back to waiting (config lost, computed again) 1, 5, 9, 50;
  // forgotten in a restart 0, 17, 0, 0; cancelled for a scattered config lost for good
  // 27, 27, 27, 97; released (a sum they feed erred) the rest.
  test.each([
    ["the default faults", { tasks: 40 }, []],
    ["a restart of the cluster", { tasks: 40, restart: 1 }, ["forgotten"]],
    ["a restart of one worker", { tasks: 40, restart: 0, restartWorker: 1 }, ["waiting"]],
    [
      "frequent rounds of work stealing and of the Active Memory Manager",
      { tasks: 60, workStealingInterval: 0.02, activeMemoryManagerInterval: 0.1 },
      ["waiting"],
    ],
  ] as const)(
    "with %s: tasks queue with their input, and leave the queue otherwise than to run",
    (_name, options, reached) => {
      const c = runSeeds(options, 1, 40);
      expect(c.enteredWithInputs).toBeGreaterThan(0);
      expect(c.sentWithInputs).toBeGreaterThan(0);
      expect(c.left, JSON.stringify(c)).toBeGreaterThan(0);
      // In the runs that compute config: back to waiting when it is lost, forgotten in a restart.
      for (const state of reached) {
        const computed = (c.leftTo[state] ?? 0) - (c.scatteredLeftTo[state] ?? 0);
        expect(computed, JSON.stringify(c)).toBeGreaterThan(0);
      }
      // Runs whose scattered config was lost for good: the loads queued for it are cancelled.
      expect(c.scatteredRuns).toBeGreaterThan(0);
      expect(c.scatteredLeftTo.forgotten ?? 0, JSON.stringify(c)).toBeGreaterThan(0);
    },
  );
});
