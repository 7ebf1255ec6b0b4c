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
}

const FNS = ["inc", "add", "load", "sum", "mul"] as const;

/** Build a random DAG from `rng`. */
export function randomDag(spec: RandomDagSpec, rng: SimRng): Workload {
  const tasks: SimTask[] = [];
  const layers: number[][] = [];
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
