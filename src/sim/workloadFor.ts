/** Build the workload that a run's options ask for. */

import {
  chainGraph,
  configuredGraph,
  mapGraph,
  shuffleGraph,
  treeGraph,
} from "./benchmarkGraphs.ts";
import type { ResolvedSimOptions, WorkloadKind } from "./options.ts";
import { randomDag } from "./randomDag.ts";
import type { SimRng } from "./rng.ts";
import { scatterRoots } from "./scatter.ts";
import type { Workload } from "./workload.ts";

/** The share of `configured` runs whose client scatters `config` rather than submit it. */
export const SCATTERED_CONFIG = 1 / 3;

/** What `mix` draws from: not `pinned`, `configured` nor `scatter`, which came later. */
const MIXABLE: readonly Exclude<WorkloadKind, "mix">[] = [
  "random",
  "random",
  "random",
  "random",
  "map",
  "tree",
  "shuffle",
  "chain",
];

/**
 * The workload of kind `o.workload` and size `o.tasks`. For `mix`, the kind
 * is drawn from `rng` (random DAGs half the time) and the benchmark graphs are
 * sized to about `o.tasks` tasks. `scatter` is the `random` DAG of the same seed
 * with some of its roots scattered. `configured` draws once from `rng`: whether
 * its client scatters `config` ({@link SCATTERED_CONFIG}). A given workload is
 * itself, drawing nothing.
 */
export function workloadFor(o: ResolvedSimOptions, rng: SimRng): Workload {
  if (typeof o.workload === "object") return o.workload;
  let kind = o.workload;
  let size = o.tasks;
  if (kind === "mix") {
    kind = rng.pick(MIXABLE);
    if (kind === "tree") size = Math.max(2, Math.ceil(o.tasks / 2));
    else if (kind === "shuffle") size = Math.max(2, Math.floor(Math.sqrt(o.tasks)));
  }
  switch (kind) {
    case "random":
    case "pinned":
    case "scatter": {
      const dag = randomDag(
        {
          tasks: size,
          width: Math.max(2, Math.ceil(Math.sqrt(size) * 1.5)),
          fanIn: 3,
          restricted: 0.15,
          maxBytes: 4_000_000,
          ...(kind === "pinned" ? { pinned: 0.4 } : {}),
        },
        rng,
      );
      if (kind === "pinned") return { ...dag, name: `pinned(${size})` };
      // The random DAG of the seed, then some of its roots scattered (more draws after it).
      return kind === "scatter" ? scatterRoots(dag, rng) : dag;
    }
    case "map":
      return mapGraph(size);
    case "tree":
      return treeGraph(size);
    case "shuffle":
      return shuffleGraph(size);
    case "chain":
      return chainGraph(size);
    case "configured":
      return configuredGraph(size, rng.chance(SCATTERED_CONFIG));
  }
}

/**
 * `w` with each of its tasks an actor with chance `share` (none of the
 * scattered ones, whose values are data), drawn from `rng`, a stream of the
 * actors' own: the graph and every other draw of the run stay as they were.
 * A share of 0 draws nothing and gives `w` itself.
 */
export function withActors(w: Workload, share: number, rng: SimRng): Workload {
  if (share === 0) return w;
  let marked = 0;
  const tasks = w.tasks.map((t) => {
    if (!rng.chance(share) || t.scattered === true) return t;
    marked++;
    return { ...t, actor: true };
  });
  return marked === 0 ? w : { ...w, tasks };
}
