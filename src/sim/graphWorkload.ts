/**
 * A user's task graph as a simulated workload: the graph `weft run` and
 * `client.get` take (`{key: [fn, ...args]}`), read by the client's own graph
 * code, becomes tasks that take the same inputs in the same order. The
 * simulator does not run the graph's functions: each task computes the
 * simulator's checksum of its key and inputs (see `values.ts`), so that what a
 * run tests is how the cluster schedules the graph and survives faults, not
 * what the functions return. A graph has no durations or result sizes: they
 * default to {@link GRAPH_TASK_DURATION} and {@link GRAPH_TASK_NBYTES}, for
 * every task or by function name.
 */

import { buildGraph, type Graph } from "../client/graph.ts";
import type { Resources } from "../protocol/messagesWorker.ts";
import { resourcesProblem } from "../scheduler/state/eventValidation.ts";
import { showCycle } from "../util/showCycle.ts";
import { showValue } from "../util/showValue.ts";
import { MAX_SIM_TASKS } from "./options.ts";
import type { SimTask, Workload } from "./workload.ts";

/**
 * Virtual seconds a graph's task runs by default: the mean of the random DAGs'
 * tasks (their durations are exponential, 0.05 s on average).
 */
export const GRAPH_TASK_DURATION = 0.05;

/**
 * A graph task's result size by default, 1 MB: a transfer of it takes 10 ms at the
 * default bandwidth, so that transfers and busy peers weigh as compute does.
 */
export const GRAPH_TASK_NBYTES = 1_000_000;

/** How long tasks run and how big their results are. */
export interface TaskCost {
  /** Mean compute time, virtual seconds (≥ 0). */
  readonly duration?: number;
  /** Result size in bytes (an integer ≥ 0). */
  readonly nbytes?: number;
}

/** How to read a graph as a workload. */
export interface GraphWorkloadOptions extends TaskCost {
  /** The keys the client asks for. Default: the graph's sinks, as `weft run` and `get`. */
  readonly keys?: readonly string[];
  /**
   * Costs by function name, over `duration` and `nbytes` for that function's tasks.
   * A name no task of the graph calls is refused (a misspelling).
   */
  readonly byFunction?: Readonly<Record<string, TaskCost>>;
  /** Re-run a task this many times after it raises (as `compute`'s `retries`). Default 0. */
  readonly retries?: number;
  /**
   * `{resource: amount}` each task needs (as `compute`'s `resources`); the
   * workers that supply resources get these. Default none.
   */
  readonly resources?: Resources;
  /** The workload's name in reports. Default `graph(N)`, N its tasks. */
  readonly name?: string;
  /**
   * The `weft sim` flags that build this workload again (`--graph FILE …`), which
   * the replay line of its runs prints. Default none: the replay line says the
   * workload came from a program.
   */
  readonly flags?: string;
}

const OPTION_NAMES = new Set([
  "duration",
  "nbytes",
  "keys",
  "byFunction",
  "retries",
  "resources",
  "name",
  "flags",
]);

/** Why a cost is wrong (`where` names it), or null. */
function costProblem(c: unknown, where: string): string | null {
  if (typeof c !== "object" || c === null || Array.isArray(c)) {
    return `${where} must be an object {duration?, nbytes?}, got ${showValue(c)}`;
  }
  for (const name of Object.keys(c)) {
    if (name !== "duration" && name !== "nbytes") {
      return `${where} has an unknown field ${JSON.stringify(name)} (duration and nbytes are known)`;
    }
  }
  const { duration, nbytes } = c as TaskCost;
  if (
    duration !== undefined &&
    !(typeof duration === "number" && duration >= 0 && Number.isFinite(duration))
  ) {
    return `${where}.duration must be a number of virtual seconds ≥ 0, got ${showValue(duration)}`;
  }
  if (nbytes !== undefined && !(Number.isSafeInteger(nbytes) && (nbytes as number) >= 0)) {
    return `${where}.nbytes must be an integer number of bytes ≥ 0, got ${showValue(nbytes)}`;
  }
  return null;
}

function checkOptions(o: GraphWorkloadOptions): void {
  if (typeof o !== "object" || o === null || Array.isArray(o)) {
    throw new TypeError(`graphWorkload: options must be an object, got ${showValue(o)}`);
  }
  for (const name of Object.keys(o)) {
    if (!OPTION_NAMES.has(name)) {
      throw new TypeError(
        `graphWorkload: unknown option ${JSON.stringify(name)} (known: ${[...OPTION_NAMES].join(", ")})`,
      );
    }
  }
  const { duration, nbytes, byFunction, keys, retries, resources } = o;
  const problem = costProblem({ duration, nbytes }, "graphWorkload: the cost");
  if (problem !== null) throw new RangeError(problem.replace("the cost.", ""));
  if (byFunction !== undefined) {
    if (typeof byFunction !== "object" || byFunction === null || Array.isArray(byFunction)) {
      throw new TypeError(`graphWorkload: byFunction must be an object of costs by function name`);
    }
    for (const [fn, c] of Object.entries(byFunction)) {
      const p = costProblem(c, `graphWorkload: byFunction[${JSON.stringify(fn)}]`);
      if (p !== null) throw new RangeError(p);
    }
  }
  if (keys !== undefined && (!Array.isArray(keys) || !keys.every((k) => typeof k === "string"))) {
    throw new TypeError(`graphWorkload: keys must be an array of strings, got ${showValue(keys)}`);
  }
  if (retries !== undefined && !(Number.isSafeInteger(retries) && retries >= 0)) {
    throw new RangeError(
      `graphWorkload: retries must be an integer ≥ 0, got ${showValue(retries)}`,
    );
  }
  if (resources !== undefined) {
    const p = resourcesProblem(resources);
    if (p !== null) throw new RangeError(`graphWorkload: resources ${p}`);
  }
  // Else refused only by the simulate() given the workload, far from the mistake.
  for (const name of ["name", "flags"] as const) {
    const v = o[name];
    if (v !== undefined && !(typeof v === "string" && v !== "")) {
      throw new TypeError(`graphWorkload: ${name} must be a non-empty string, got ${showValue(v)}`);
    }
  }
}

/**
 * The indices of `keys`'s tasks and of every task they need, dependencies first:
 * a depth-first walk, throwing a TypeError naming a cycle it meets (`buildGraph`
 * finds only the cycles no sink needs; the others the scheduler would report).
 */
function topologicalOrder(
  deps: ReadonlyMap<string, readonly string[]>,
  roots: readonly string[],
): string[] {
  const order: string[] = [];
  /** 1: on the walk's path; 2: placed in `order`. */
  const mark = new Map<string, 1 | 2>();
  for (const root of roots) {
    if (mark.has(root)) continue;
    const path: string[] = [root];
    const next: number[] = [0];
    mark.set(root, 1);
    while (path.length > 0) {
      const key = path[path.length - 1];
      const ds = deps.get(key) as readonly string[];
      const i = next[next.length - 1];
      if (i === ds.length) {
        path.pop();
        next.pop();
        mark.set(key, 2);
        order.push(key);
        continue;
      }
      next[next.length - 1] = i + 1;
      const d = ds[i];
      const m = mark.get(d);
      if (m === 2) continue;
      if (m === 1) {
        throw new TypeError(
          `graphWorkload: the graph has a cycle: ${showCycle([...path.slice(path.indexOf(d)), d])}`,
        );
      }
      mark.set(d, 1);
      path.push(d);
      next.push(0);
    }
  }
  return order;
}

/**
 * The workload that computes `keys` of `graph` (default: its sinks): one task a
 * graph task they need, with the graph's function names and dependencies, in an
 * order that puts every task after those it needs. Throws a TypeError for a graph
 * `compute` would refuse, a cycle, a key the graph lacks or names a literal, a
 * task needing a key the graph lacks (a future's), or an empty graph; a RangeError
 * for bad options or more than `MAX_SIM_TASKS` tasks.
 */
export function graphWorkload(graph: Graph, o: GraphWorkloadOptions = {}): Workload {
  checkOptions(o);
  const built = buildGraph(graph, {}, {}, "graphWorkload");
  if (built.tasks.size === 0) {
    throw new TypeError(
      "graphWorkload: the graph has no tasks (entries [fn, ...args]): the simulator schedules tasks, and literals need none",
    );
  }
  const keys = o.keys ?? built.sinks;
  // A Set: \`keys\` may be every task of a big graph (a map's sinks), and a search of
  // an array for each was quadratic (seconds at 100,000 keys).
  const rootSet = new Set<string>();
  for (const key of keys) {
    const task = built.aliases.get(key) ?? key;
    if (built.tasks.has(task)) {
      rootSet.add(task);
    } else if (built.literals.has(key)) {
      throw new TypeError(
        `graphWorkload: the key ${showValue(key, 200)} is a literal, not a task: the simulator computes tasks only (ask for the tasks that use it)`,
      );
    } else {
      throw new TypeError(`graphWorkload: the graph has no key ${showValue(key, 200)}`);
    }
  }
  const roots = [...rootSet];
  if (roots.length === 0) throw new TypeError("graphWorkload: keys names no task");
  const deps = new Map<string, readonly string[]>();
  for (const [key, task] of built.tasks) {
    for (const d of task.dependencies) {
      if (!built.tasks.has(d)) {
        throw new TypeError(
          `graphWorkload: the task ${showValue(key, 200)} needs ${showValue(d, 200)}, which is not a task of the graph (a future's key?): the simulator runs whole graphs`,
        );
      }
    }
    deps.set(key, task.dependencies);
  }
  const order = topologicalOrder(deps, roots);
  if (o.byFunction !== undefined) {
    // Every task's, not only those `keys` need: costs written for the whole graph
    // stay right when keys ask for a part of it.
    const fns = new Set([...built.tasks.values()].map((t) => t.spec.fn));
    const unused = Object.keys(o.byFunction).filter((fn) => !fns.has(fn));
    // A misspelt name would leave its tasks at the defaults, unsaid.
    if (unused.length > 0) {
      throw new RangeError(
        `graphWorkload: byFunction names ${unused.map((f) => JSON.stringify(f)).join(", ")}, which no task of the graph calls (they call ${[...fns].map((f) => JSON.stringify(f)).join(", ")})`,
      );
    }
  }
  if (order.length > MAX_SIM_TASKS) {
    throw new RangeError(
      `graphWorkload: the graph has ${order.length} tasks to run; at most ${MAX_SIM_TASKS} (each lives in the simulated scheduler, a worker and the client: more runs out of memory)`,
    );
  }
  const index = new Map<string, number>();
  for (let i = 0; i < order.length; i++) index.set(order[i], i);
  const tasks: SimTask[] = order.map((key) => {
    const fn = built.tasks.get(key)?.spec.fn as string;
    const cost =
      (o.byFunction !== undefined && Object.hasOwn(o.byFunction, fn)
        ? o.byFunction[fn]
        : undefined) ?? {};
    return {
      key,
      fn,
      deps: (deps.get(key) as readonly string[]).map((d) => index.get(d) as number),
      duration: cost.duration ?? o.duration ?? GRAPH_TASK_DURATION,
      nbytes: cost.nbytes ?? o.nbytes ?? GRAPH_TASK_NBYTES,
      ...(o.retries !== undefined && o.retries > 0 ? { retries: o.retries } : {}),
      ...(o.resources !== undefined ? { resources: o.resources } : {}),
    };
  });
  return {
    name: o.name ?? `graph(${tasks.length})`,
    tasks,
    wanted: roots.map((k) => index.get(k) as number),
    ...(o.resources !== undefined ? { workerResources: o.resources } : {}),
    ...(o.flags !== undefined ? { flags: o.flags } : {}),
  };
}
