/**
 * Which options a workload leaves without effect: the client's `replicate` requests
 * need scattered data, and its restarts are not made where there is some (they
 * would lose it for good). `weft sim` refuses such a flag rather than ignore it, and
 * the replay command leaves such an option out, so that it never prints a line that
 * `weft sim` refuses.
 */

import type { SimOptions, WorkloadKind } from "./options.ts";
import type { Workload } from "./workload.ts";

/** Options that act only in runs with scattered data. */
export const SCATTERED_DATA_OPTIONS = ["replicate", "replicateOne", "rebalance", "retire"] as const;

/** Options that act only in runs without scattered data. */
export const UNSCATTERED_OPTIONS = ["restart", "restartWorker"] as const;

/** An option that acts only with, or only without, scattered data. */
export type ScatterBoundOption =
  | (typeof SCATTERED_DATA_OPTIONS)[number]
  | (typeof UNSCATTERED_OPTIONS)[number];

/**
 * The options that can change nothing in a run of `workload`, and why, as the end
 * of a sentence whose subject is the option. `configured` has none: whether its
 * client scatters `config` is drawn per seed, so that every option acts in some of
 * its runs. `mix` never draws `scatter`.
 */
export function optionsWithoutEffect(workload: WorkloadKind | Workload): {
  readonly options: readonly ScatterBoundOption[];
  readonly why: string;
} {
  if (typeof workload === "object") {
    // A given workload scatters what it says, in every run.
    return workload.tasks.some((t) => t.scattered === true)
      ? {
          options: UNSCATTERED_OPTIONS,
          why: "acts only on runs without scattered data, and this workload scatters some",
        }
      : {
          options: SCATTERED_DATA_OPTIONS,
          why: "acts only on runs with scattered data (the scatter workload, and configured with its config scattered), and a graph has none",
        };
  }
  if (workload === "configured") return { options: [], why: "" };
  if (workload === "scatter") {
    return {
      options: UNSCATTERED_OPTIONS,
      why: "acts only on runs without scattered data, and every scatter run has some",
    };
  }
  return {
    options: SCATTERED_DATA_OPTIONS,
    why: `acts only on runs with scattered data (the scatter workload, and configured with its config scattered), and no ${workload} run has any`,
  };
}

/** True if `name` can change nothing in a run of `workload`. */
export function withoutEffect(workload: WorkloadKind | Workload, name: keyof SimOptions): boolean {
  return (optionsWithoutEffect(workload).options as readonly string[]).includes(name);
}
