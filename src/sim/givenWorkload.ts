/**
 * Checks of a workload a program gives `simulate` (`workload: graphWorkload(…)`,
 * or one it built): the simulator trusts its built-in workloads, but a program's
 * could put a task before one it needs, name a missing task or share a key, and
 * the run would then fail as a bug of the cluster's, or throw deep inside.
 */

import { resourcesProblem, workersProblem } from "../scheduler/state/eventValidation.ts";
import { showValue } from "../util/showValue.ts";
import { isRecord } from "../util/valueShapes.ts";
import type { Workload } from "./workload.ts";

/** The fields of a SimTask: a misspelt one (`retry: 3`) would be ignored, unsaid. */
const TASK_FIELDS: readonly string[] = [
  "key",
  "fn",
  "deps",
  "nbytes",
  "duration",
  "resources",
  "retries",
  "workers",
  "allowOtherWorkers",
  "scattered",
  "actor",
];

/** The fields of a Workload. */
const WORKLOAD_FIELDS: readonly string[] = ["name", "tasks", "wanted", "workerResources", "flags"];

/** `where` has a field `known` lacks: which, or null. */
function unknownField(
  o: Record<string, unknown>,
  known: readonly string[],
  where: string,
): string | null {
  const name = Object.keys(o).find((k) => !known.includes(k));
  return name === undefined
    ? null
    : `${where}has an unknown field ${JSON.stringify(name)} (known: ${known.join(", ")})`;
}

/** Why task `i` of a workload of `n` tasks is wrong, or null. */
function taskProblem(t: unknown, i: number, keys: Set<string>): string | null {
  const at = `tasks[${i}]`;
  if (!isRecord(t)) return `${at} must be an object {key, fn, deps, nbytes, duration}`;
  const unknown = unknownField(t, TASK_FIELDS, `${at} `);
  if (unknown !== null) return unknown;
  if (typeof t.key !== "string" || t.key === "") return `${at}.key must be a non-empty string`;
  if (keys.has(t.key)) return `${at}.key ${JSON.stringify(t.key)} is the key of an earlier task`;
  keys.add(t.key);
  if (typeof t.fn !== "string" || t.fn === "") return `${at}.fn must be a non-empty string`;
  const deps = t.deps;
  if (!Array.isArray(deps) || !deps.every((d) => Number.isInteger(d) && d >= 0 && d < i)) {
    return `${at}.deps must be indices of earlier tasks (dependencies come first), got ${showValue(deps)}`;
  }
  if (!(Number.isSafeInteger(t.nbytes) && (t.nbytes as number) >= 0)) {
    return `${at}.nbytes must be an integer ≥ 0, got ${showValue(t.nbytes)}`;
  }
  if (!(typeof t.duration === "number" && t.duration >= 0 && Number.isFinite(t.duration))) {
    return `${at}.duration must be a number of virtual seconds ≥ 0, got ${showValue(t.duration)}`;
  }
  if (t.resources !== undefined) {
    const p = resourcesProblem(t.resources);
    if (p !== null) return `${at}.resources ${p}`;
  }
  if (t.retries !== undefined && !(Number.isSafeInteger(t.retries) && (t.retries as number) >= 0)) {
    return `${at}.retries must be an integer ≥ 0, got ${showValue(t.retries)}`;
  }
  if (t.workers !== undefined) {
    const p = workersProblem(t.workers);
    if (p !== null) return `${at}.workers ${p}`;
  }
  for (const flag of ["allowOtherWorkers", "scattered", "actor"] as const) {
    if (t[flag] !== undefined && typeof t[flag] !== "boolean") {
      return `${at}.${flag} must be a boolean, got ${showValue(t[flag])}`;
    }
  }
  if (t.scattered === true && deps.length > 0) {
    return `${at} is scattered, so it must have no deps (its value is data the client holds)`;
  }
  return null;
}

/**
 * Why `w`, given as a run's `workload`, cannot be run, or null. `maxTasks`: the
 * most tasks a run may hold.
 */
export function workloadProblem(w: unknown, maxTasks: number): string | null {
  if (!isRecord(w)) return `must be a workload kind or a Workload object, got ${showValue(w)}`;
  const unknown = unknownField(w, WORKLOAD_FIELDS, "");
  if (unknown !== null) return unknown;
  if (typeof w.name !== "string" || w.name === "") return "name must be a non-empty string";
  const tasks = w.tasks;
  if (!Array.isArray(tasks) || tasks.length === 0) return "tasks must be a non-empty array";
  if (tasks.length > maxTasks) {
    return `has ${tasks.length} tasks; at most ${maxTasks} (each lives in the simulated scheduler, a worker and the client: more runs out of memory)`;
  }
  const keys = new Set<string>();
  for (let i = 0; i < tasks.length; i++) {
    const p = taskProblem(tasks[i], i, keys);
    if (p !== null) return p;
  }
  const wanted = w.wanted;
  if (
    !Array.isArray(wanted) ||
    wanted.length === 0 ||
    !wanted.every((i) => Number.isInteger(i) && i >= 0 && i < tasks.length) ||
    new Set(wanted).size !== wanted.length
  ) {
    return `wanted must be a non-empty array of distinct task indices, got ${showValue(wanted)}`;
  }
  if (w.workerResources !== undefined) {
    const p = resourcesProblem(w.workerResources);
    if (p !== null) return `workerResources ${p}`;
  }
  if (w.flags !== undefined && typeof w.flags !== "string") {
    return `flags must be a string of weft sim flags, got ${showValue(w.flags)}`;
  }
  return null;
}

/** True if `w` is a Workload object rather than the name of a built-in kind. */
export function isGivenWorkload(w: unknown): w is Workload {
  return typeof w === "object" && w !== null;
}
