/**
 * The faults that strike at random times rather than per operation: worker
 * deaths, partitions, pauses and steals, each a Poisson process at its own rate. They
 * stop once the client has every result. (Per-operation faults — network
 * failures, busy peers, slow links, failed fetches, task errors, secessions,
 * reschedules — are drawn by the worker shell.)
 */

import type { Simulation } from "./simulation.ts";

/** Start the timers of the death, pause and steal faults of `sim`. */
export function startFaults(sim: Simulation): void {
  const { faults } = sim.options;
  const q = sim.queue;
  const rng = sim.rng;

  const every = (rate: number, act: () => void): void => {
    if (!(rate > 0)) return;
    const tick = (): void => {
      if (!sim.injecting) return;
      act();
      q.at(rng.exp(1 / rate), tick, true);
    };
    q.at(rng.exp(1 / rate), tick, true);
  };

  every(faults.death, () => {
    const live = sim.healthyWorkers();
    if (live.length < 2) return; // at least one worker survives
    sim.kill(rng.pick(live));
  });

  every(faults.partition, () => {
    const live = sim.healthyWorkers();
    if (live.length < 2) return; // at least one worker survives
    sim.partition(rng.pick(live));
  });

  every(faults.pause, () => {
    const candidates = sim.liveWorkers().filter((w) => !w.pausedForMemory);
    if (candidates.length === 0) return;
    const w = rng.pick(candidates);
    sim.stats.faults.pause++;
    w.pause();
    q.at(rng.uniform(0.05, 1), () => w.resume());
  });

  every(faults.steal, () => {
    if (sim.scheduler.stealSomething()) sim.stats.faults.steal++;
  });
}
