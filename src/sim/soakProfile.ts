/**
 * The options of soak run `seed`: the seed also varies the cluster (2 to 6
 * workers, 12 to 60 tasks, the `mix` workload's graphs) so that a long soak covers many
 * shapes. The replay command of a failing run names them all.
 */

import type { SimOptions } from "./options.ts";

/** Options of the soak run with this seed (every fault on at its default rate). */
export function soakOptions(seed: number): SimOptions {
  return {
    seed,
    workload: "mix",
    workers: 2 + (seed % 5),
    tasks: 12 + ((seed * 7) % 49),
  };
}
