/**
 * weft's four benchmark graphs (see DESIGN.md): map of independent `inc`
 * tasks, a binary tree reduction, a 64×64 all-to-all shuffle, and a chain;
 * and the simulator's `configured` graph, Dask's canonical root-ish tasks with
 * an input. Each takes a size so that tests can run small versions.
 */

import type { SimTask, Workload } from "./workload.ts";

const SMALL = 8;

/** `n` independent `inc` tasks, all wanted (default 10,000). */
export function mapGraph(n = 10_000): Workload {
  const tasks: SimTask[] = [];
  for (let i = 0; i < n; i++) {
    tasks.push({ key: `inc-${i}`, fn: "inc", deps: [], nbytes: SMALL, duration: 0.001 });
  }
  return { name: `map(${n})`, tasks, wanted: tasks.map((_, i) => i) };
}

/** A binary tree reduction over `leaves` leaves (default 8,192); the root is wanted. */
export function treeGraph(leaves = 8_192): Workload {
  const tasks: SimTask[] = [];
  let level: number[] = [];
  for (let i = 0; i < leaves; i++) {
    level.push(tasks.length);
    tasks.push({ key: `leaf-${i}`, fn: "inc", deps: [], nbytes: SMALL, duration: 0.001 });
  }
  let depth = 0;
  while (level.length > 1) {
    depth++;
    const next: number[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const deps = i + 1 < level.length ? [level[i], level[i + 1]] : [level[i]];
      next.push(tasks.length);
      tasks.push({
        key: `sum-${depth}-${i >> 1}`,
        fn: "sum",
        deps,
        nbytes: SMALL,
        duration: 0.001,
      });
    }
    level = next;
  }
  return { name: `tree(${leaves})`, tasks, wanted: [level[0]] };
}

/**
 * An all-to-all shuffle of `n` partitions (default 64): `n` loads, `n × n`
 * splits (piece j of partition i), `n` concatenations each taking one piece
 * of every partition; the concatenations are wanted.
 */
export function shuffleGraph(n = 64): Workload {
  const tasks: SimTask[] = [];
  const loads: number[] = [];
  for (let i = 0; i < n; i++) {
    loads.push(tasks.length);
    tasks.push({ key: `load-${i}`, fn: "load", deps: [], nbytes: 64 * 1024, duration: 0.002 });
  }
  const splits: number[][] = [];
  for (let i = 0; i < n; i++) {
    const row: number[] = [];
    for (let j = 0; j < n; j++) {
      row.push(tasks.length);
      tasks.push({
        key: `split-${i}-${j}`,
        fn: "split",
        deps: [loads[i]],
        nbytes: 1024,
        duration: 0.0005,
      });
    }
    splits.push(row);
  }
  const wanted: number[] = [];
  for (let j = 0; j < n; j++) {
    wanted.push(tasks.length);
    tasks.push({
      key: `concat-${j}`,
      fn: "concat",
      deps: splits.map((row) => row[j]),
      nbytes: 64 * 1024,
      duration: 0.002,
    });
  }
  return { name: `shuffle(${n}x${n})`, tasks, wanted };
}

/** A chain of `n` `inc` tasks (default 2,000); the last is wanted. */
export function chainGraph(n = 2_000): Workload {
  const tasks: SimTask[] = [];
  for (let i = 0; i < n; i++) {
    tasks.push({
      key: `chain-${i}`,
      fn: "inc",
      deps: i === 0 ? [] : [i - 1],
      nbytes: SMALL,
      duration: 0.001,
    });
  }
  return { name: `chain(${n})`, tasks, wanted: [n - 1] };
}

/** How many `load` results each `sum` of {@link configuredGraph} combines. */
const CONFIGURED_FAN_IN = 4;

/**
 * Dask's canonical root-ish tasks with an input (default 1,000 loads): one small
 * `config` task, `n` `load-i` tasks each reading it (a group larger than twice
 * the cluster's threads that depends on one group of one task: root-ish, so
 * queued with their input in memory when every worker is saturated), `sum-j`
 * tasks each combining 4 consecutive loads (fetched from wherever they ran),
 * and a `total` of the sums; the sums and `total` are wanted (a load that errs
 * errs its sum and `total`, not the whole run). With `scatteredConfig`, `config`
 * is data the client scatters (`Client.scatter`) rather than a task: lost with its
 * last holder, it is lost for good, and the loads needing it are cancelled.
 */
export function configuredGraph(n = 1_000, scatteredConfig = false): Workload {
  const tasks: SimTask[] = [
    scatteredConfig
      ? { key: "config", fn: "scattered", deps: [], nbytes: SMALL, duration: 0, scattered: true }
      : { key: "config", fn: "config", deps: [], nbytes: SMALL, duration: 0.001 },
  ];
  const loads: number[] = [];
  for (let i = 0; i < n; i++) {
    loads.push(tasks.length);
    tasks.push({ key: `load-${i}`, fn: "load", deps: [0], nbytes: 16 * 1024, duration: 0.005 });
  }
  const sums: number[] = [];
  for (let i = 0; i < n; i += CONFIGURED_FAN_IN) {
    sums.push(tasks.length);
    tasks.push({
      key: `sum-${i / CONFIGURED_FAN_IN}`,
      fn: "sum",
      deps: loads.slice(i, i + CONFIGURED_FAN_IN),
      nbytes: SMALL,
      duration: 0.001,
    });
  }
  const total = tasks.length;
  tasks.push({ key: "total", fn: "sum", deps: sums, nbytes: SMALL, duration: 0.001 });
  const name = scatteredConfig ? `configured(${n}, config scattered)` : `configured(${n})`;
  return { name, tasks, wanted: [...sums, total] };
}
