/**
 * Random task graphs: layered DAGs with a random width per layer, random
 * fan-in (mostly from the previous layer, sometimes from older ones), random
 * result sizes and durations, some resource-restricted tasks and some with
 * retries. The client wants every sink and a few random inner keys.
 */

import type { SimRng } from "./rng.ts";
import type { SimTask, Workload } from "./workload.ts";

/** Shape parameters of a random DAG. */
export interface RandomDagSpec {
  /** Number of tasks (≥ 1). */
  readonly tasks: number;
  /** Widest layer. */
  readonly width: number;
  /** Most dependencies of one task. */
  readonly fanIn: number;
  /** Fraction of tasks that need the resource `R`. */
  readonly restricted: number;
  /** Largest result size in bytes (sizes are log-uniform from 8 bytes up). */
  readonly maxBytes: number;
  /**
   * Fraction of tasks with worker restrictions (`workers=`, hosts of
   * {@link SIM_HOSTS}); 0 draws nothing, so the other workloads' seeds stay as
   * they were.
   */
  readonly pinned?: number;
}

/** The hosts the simulator's workers are on (`tcp://10.0.<n % 4>.1:<port>`). */
export const SIM_HOSTS: readonly string[] = ["10.0.0.1", "10.0.1.1", "10.0.2.1", "10.0.3.1"];

/**
 * Worker restrictions for a pinned task: loose ones to one host (preferred, any
 * other when it has no running worker), or strict ones to every host (always
 * satisfiable: a strict restriction to fewer could wait for good once faults
 * have emptied its hosts, which is not a bug).
 */
function pinning(rng: SimRng): Pick<SimTask, "workers" | "allowOtherWorkers"> {
  return rng.chance(0.7)
    ? { workers: [rng.pick(SIM_HOSTS)], allowOtherWorkers: true }
    : { workers: SIM_HOSTS };
}

const FNS = ["inc", "add", "load", "sum", "mul"] as const;

/** Build a random DAG from `rng`. */
export function randomDag(spec: RandomDagSpec, rng: SimRng): Workload {
  const tasks: SimTask[] = [];
  const layers: number[][] = [];
  const pinned = spec.pinned ?? 0;
  while (tasks.length < spec.tasks) {
    const width = Math.min(rng.range(1, Math.max(1, spec.width)), spec.tasks - tasks.length);
    const layer: number[] = [];
    for (let j = 0; j < width; j++) {
      const i = tasks.length;
      const deps: number[] = [];
      if (layers.length > 0) {
        const n = rng.range(layers.length === 1 ? 1 : 0, Math.max(1, spec.fanIn));
        for (let k = 0; k < n; k++) {
          const from = rng.chance(0.8) ? layers[layers.length - 1] : layers[rng.int(layers.length)];
          const d = rng.pick(from);
          if (!deps.includes(d)) deps.push(d);
        }
      }
      const fn = rng.pick(FNS);
      const restricted = rng.chance(spec.restricted);
      tasks.push({
        key: `${fn}-${i}`,
        fn,
        deps,
        nbytes: Math.round(
          Math.exp(rng.uniform(Math.log(8), Math.log(Math.max(8, spec.maxBytes)))),
        ),
        duration: rng.exp(0.05) + 0.001,
        ...(restricted ? { resources: { R: 1 } } : {}),
        ...(rng.chance(0.1) ? { retries: rng.range(1, 2) } : {}),
        ...(pinned > 0 && rng.chance(pinned) ? pinning(rng) : {}),
      });
      layer.push(i);
    }
    layers.push(layer);
  }
  const hasDependent = new Uint8Array(tasks.length);
  for (const t of tasks) for (const d of t.deps) hasDependent[d] = 1;
  const wanted: number[] = [];
  for (let i = 0; i < tasks.length; i++) {
    if (hasDependent[i] === 0 || rng.chance(0.05)) wanted.push(i);
  }
  return {
    name: `random(${spec.tasks})`,
    tasks,
    wanted,
    ...(spec.restricted > 0 ? { workerResources: { R: 2 } } : {}),
  };
}
