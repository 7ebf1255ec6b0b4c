/** What the bar of a long `weft sim` run counts. */

import type { Simulation } from "../../sim/simulation.ts";

/**
 * The tasks of `sim`'s workload the scheduler has seen done (in memory or erred), of
 * all: what the bar of a single run shows. Not the wanted keys the client holds,
 * which a graph reduced to one result left at 0 of 1 until its end. A task computed
 * again after its worker was lost is not counted twice; the tasks a restart submits
 * again are, so the count is capped at the workload's tasks.
 */
export function tasksDone(sim: Simulation): [done: number, total: number] {
  const total = sim.workload.tasks.length;
  return [Math.min(sim.scheduler.state.tasksDone, total), total];
}
