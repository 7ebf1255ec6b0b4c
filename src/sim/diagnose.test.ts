/**
 * The diagnostics of a stuck run, on a finished chain whose scheduler states
 * are then set by hand: which keys hold the client up, and whose stories are
 * shown.
 */

import { expect, test } from "vitest";
import type { SchedulerTaskStateName } from "../scheduler/state/taskState.ts";
import { storiesOf, stuckKeys } from "./diagnose.ts";
import { NO_FAULTS } from "./faults.ts";
import { Simulation } from "./simulation.ts";

/**
 * Seed 2's chain-0 → chain-1 → chain-2 → chain-3, run on one worker of three
 * (the others never hear of it), left unreleased: chain-3 in memory, the rest released.
 */
function chain(): Simulation {
  const sim = new Simulation({
    seed: 2,
    workload: "chain",
    tasks: 4,
    workers: 3,
    faults: NO_FAULTS,
    releasePhase: false,
    actors: 0,
  });
  expect(sim.run().ok).toBe(true);
  return sim;
}

test("stuckKeys walks down from the pending keys through waiting tasks to what holds them up", () => {
  const sim = chain();
  const s = sim.scheduler.state;
  const states = (...st: SchedulerTaskStateName[]): void => {
    st.forEach((state, i) => {
      const ts = s.tasks.get(`chain-${i}`);
      if (ts === undefined) throw new Error(`chain-${i} is unknown`);
      ts.state = state;
    });
  };
  // Done: nothing holds it up.
  expect(stuckKeys(s, ["chain-3"])).toEqual([]);
  // A key the scheduler does not know holds itself up.
  expect(stuckKeys(s, ["nope", "chain-3"])).toEqual(["nope"]);
  // Waiting on an input that runs: the input.
  states("released", "released", "processing", "waiting");
  expect(stuckKeys(s, ["chain-3"])).toEqual(["chain-2"]);
  // Waiting with every input in memory: itself (it should have run).
  states("released", "released", "memory", "waiting");
  expect(stuckKeys(s, ["chain-3"])).toEqual(["chain-3"]);
  // Only a waiting task is looked through; the others are the blockers, in the pending keys' order.
  states("released", "released", "processing", "processing");
  expect(stuckKeys(s, ["chain-3"])).toEqual(["chain-3"]);
  expect(stuckKeys(s, ["chain-3", "chain-2"])).toEqual(["chain-3", "chain-2"]);
  expect(stuckKeys(s, ["chain-3", "chain-2"], 1)).toEqual(["chain-3"]);
  // A blocker reached twice is named once.
  expect(stuckKeys(s, ["chain-3", "chain-3"])).toEqual(["chain-3"]);
  states("released", "released", "released", "memory");
});

test("storiesOf shows a key's story on the scheduler and on the workers that know it, not the others", () => {
  const sim = chain();
  const text = storiesOf(sim.scheduler.state, sim.workers.values(), ["chain-0"]);
  const knowing = [...sim.workers.values()].filter((w) => w.state.story("chain-0").length > 0);
  expect(knowing.length).toBe(1);
  expect(text).toMatch(/^key chain-0: scheduler says released\n {2}scheduler story:\n/);
  for (const w of sim.workers.values()) {
    expect(text.includes(`worker ${w.address} `)).toBe(knowing.includes(w));
  }
});
