/**
 * The worker shell's `get_data`: what it serves, and when it answers busy
 * instead, on the workers of a finished run.
 */

import { expect, test } from "vitest";
import { NO_FAULTS } from "./faults.ts";
import { Simulation } from "./simulation.ts";
import type { SimWorker } from "./simWorker.ts";
import { SimActorRef, SimValue } from "./values.ts";

/** A finished run (not released), with `actors` its share of actors, and a live worker holding something. */
function finished(actors: number, seed = 1): { sim: Simulation; w: SimWorker } {
  const sim = new Simulation({ seed, tasks: 20, faults: NO_FAULTS, releasePhase: false, actors });
  expect(sim.run().ok).toBe(true);
  const w = sim.liveWorkers().find((v) => v.state.data.size > 0 || v.state.actors.size > 0);
  if (w === undefined) throw new Error("no live worker holds anything");
  return { sim, w };
}

test("a worker paused for memory serves one transfer at a time, else up to its outgoing limit", () => {
  const { sim, w } = finished(0);
  const key = [...w.state.data.keys()][0];
  expect(sim.options.outgoingLimit).toBe(2);
  w.outgoing = 1;
  expect(w.serveGetData([key])?.get(key)).toBeInstanceOf(SimValue);
  w.outgoing = 1;
  w.pause();
  expect(w.serveGetData([key])).toBeNull();
  w.outgoing = 0;
  expect(w.serveGetData([key])?.get(key)).toBeInstanceOf(SimValue);
  w.resume();
  // Paused by the scheduler to be retired, it serves at the full rate (Dask's
  // closing_gracefully): its data is on its way out.
  w.deliver({ op: "pause", stimulusId: "retire" });
  expect(w.paused).toBe(true);
  w.outgoing = 1;
  expect(w.serveGetData([key])?.get(key)).toBeInstanceOf(SimValue);
  w.outgoing = 2;
  expect(w.serveGetData([key])).toBeNull();
});

test("an actor is served as a handle naming its worker, only once its task is in memory there", () => {
  for (let seed = 1; seed <= 30; seed++) {
    const { w } = finished(0.5, seed);
    const key = [...w.state.actors.keys()].find((k) => w.state.tasks.get(k)?.state === "memory");
    if (key === undefined) continue;
    const handle = w.serveGetData([key])?.get(key);
    expect(handle).toBeInstanceOf(SimActorRef);
    expect((handle as SimActorRef).address).toBe(w.address);
    const ts = w.state.tasks.get(key);
    if (ts === undefined) throw new Error("no task");
    ts.state = "executing";
    w.outgoing = 0;
    expect(w.serveGetData([key])?.has(key)).toBe(false);
    ts.state = "memory";
    return;
  }
  throw new Error("no run in seeds 1..30 ended with an actor in memory on a live worker");
});
