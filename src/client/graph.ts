/**
 * Dask-style graphs: `{key: [fn, ...args]}` where `fn` is a registered task
 * name (or a `defineTask` definition) and an argument that is another key of
 * the graph stands for that task's result:
 *
 * ```ts
 * const graph = {
 *   x: ["inc", 1],
 *   y: ["inc", 2],
 *   z: ["add", "x", "y"],      // add(inc(1), inc(2))
 *   w: ["sum", ["x", "y", 10]], // keys inside arrays are results too
 * };
 * ```
 *
 * A value that is another key of the graph is an alias, as in Dask (`{z:
 * "x"}`: z stands for x's result; wrap a string with {@link literal} to keep
 * it one). Any other value that is not such an array is a literal: its key
 * stands for the value itself (wrap an array with {@link literal} to make it
 * one). Strings are matched against keys inside arrays only, as in Dask;
 * inside plain objects use `taskRef(key)`. Futures may appear anywhere as
 * arguments.
 */

import type { GraphTask } from "../protocol/messagesClient.ts";
import { type TaskRef, taskRef } from "../protocol/messagesTaskSpec.ts";
import type { Resources } from "../protocol/messagesWorker.ts";
import { resourcesProblem, workersProblem } from "../scheduler/state/eventValidation.ts";
import { isMapObject, mapEntries } from "../util/collectionEntries.ts";
import { showCycle } from "../util/showCycle.ts";
import { showValue } from "../util/showValue.ts";
import type { TaskDefinition, TaskFunction } from "../worker/taskRegistry.ts";
import { type NullsAsDefaults, nullsAsDefaults } from "./argChecks.ts";
import { Future } from "./future.ts";
import {
  ArgMapper,
  type ArgPath,
  argumentFutureKey,
  formatPath,
  isTaskDefinition,
  KEEP,
  keyProblem,
  pathOf,
  taskName,
} from "./taskArgs.ts";

/**
 * A graph: `{key: [fn, ...args] | literal}`, as an object or a `Map` (Dask's
 * graph is any mapping). A `Map` is the cheaper of the two to build with many
 * keys: an object's keys are internalized strings and, past a few dozen,
 * it becomes a dictionary anyway.
 */
export type Graph = Readonly<Record<string, unknown>> | ReadonlyMap<string, unknown>;

/** One task of a graph. */
export type GraphTaskEntry = readonly [TaskDefinition<TaskFunction> | string, ...unknown[]];

/** A literal value in a graph (see {@link literal}). */
export interface Literal<T = unknown> {
  /** The value, kept as it is (the field's name marks the wrapper). */
  readonly __weftLiteral: T;
}

/** Mark `value` as a literal, for arrays that would otherwise read as tasks. */
export function literal<T>(value: T): Literal<T> {
  return { __weftLiteral: value };
}

function isLiteralWrapper(v: unknown): v is Literal {
  return typeof v === "object" && v !== null && Object.hasOwn(v, "__weftLiteral");
}

/** True if a graph value is a task (an array starting with a name or definition). */
export function isTaskEntry(v: unknown): v is GraphTaskEntry {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    ((typeof v[0] === "string" && v[0] !== "") || isTaskDefinition(v[0]))
  );
}

/** Options applying to every task of a graph. */
export interface GraphOptions {
  /** Re-run a task this many times after it raises. Default (or null) 0. */
  readonly retries?: number | null;
  /** `{resource: amount}` a worker must supply to run each task. Default (or null) none. */
  readonly resources?: Resources | null;
  /** Higher runs earlier. */
  readonly priority?: number;
  /**
   * The workers that may run each task: addresses (`tcp://10.0.0.1:4000`) or
   * hosts (`10.0.0.1`: any worker there), as Dask's `workers=`. Default (or
   * null) any worker.
   */
  readonly workers?: string | readonly string[] | null;
  /** With `workers`: run elsewhere when none of them can (Dask's `allow_other_workers`). Default false. */
  readonly allowOtherWorkers?: boolean;
}

/** The options of {@link GraphOptions} that null leaves at their default, as Dask's `None`. */
export const GRAPH_NULL_DEFAULTS = ["retries", "resources", "workers"] as const;

/** {@link GraphOptions} once {@link nullsAsDefaults} took their nulls for defaults. */
export type GivenGraphOptions = NullsAsDefaults<GraphOptions, (typeof GRAPH_NULL_DEFAULTS)[number]>;

/**
 * `workers` as `update-graph` carries it: an array (Dask also takes one
 * name), or undefined for any worker (not given, or null as Dask's `None`).
 */
export function workersOption(o: {
  readonly workers?: string | readonly string[] | null;
}): readonly string[] | undefined {
  const w = o.workers;
  return typeof w === "string" ? [w] : (w ?? undefined);
}

/** A graph ready for `update-graph`. */
export interface BuiltGraph {
  /** The tasks, with task references for the keys their arguments name. */
  readonly tasks: Map<string, GraphTask>;
  /**
   * The literal keys and their values (inlined into the tasks that use them),
   * aliases of literals included.
   */
  readonly literals: ReadonlyMap<string, unknown>;
  /**
   * The keys that are aliases of tasks (`{z: "x"}`, as Dask's), each with the
   * task it stands for at the end of its chain: its future is that task's.
   */
  readonly aliases: ReadonlyMap<string, string>;
  /**
   * Task keys (and aliases of tasks) no other task or alias uses, in graph
   * order (found when first read).
   */
  readonly sinks: readonly string[];
  /**
   * Keys no task uses, tasks and literals, in graph order: what `get` returns by
   * default (`{a: 5}` gives `{a: 5}`).
   */
  readonly unusedKeys: readonly string[];
}

/** The dependencies of every task without any (messages are never modified). */
const NO_DEPENDENCIES: readonly string[] = Object.freeze([]);

/**
 * A copy of `value`, the literal at graph key `key` (see {@link ArgMapper}).
 * Throws a TypeError naming where it holds something that is not data: what task
 * arguments refuse, and futures or task references, which only task arguments
 * can hold (a literal is inlined as it is into the tasks that name its key).
 */
function checkedCopyOfLiteral(value: unknown, key: string, op: string): unknown {
  const root = `the literal at graph key ${JSON.stringify(key)}`;
  const refuseReferences = (
    v: string | TaskRef | Future,
    parent: ArgPath | null,
    seg: number | string | null,
  ): typeof KEEP => {
    if (typeof v === "string") return KEEP;
    const what = v instanceof Future ? "a future" : "a task reference";
    throw new TypeError(
      `${op}: ${formatPath(pathOf(parent, seg), root)} is ${what}; literals are values (pass it as a task's argument instead)`,
    );
  };
  // The copy is what the tasks get (the graph taken as it is at the call).
  return new ArgMapper(refuseReferences, op, root).map(value);
}

/**
 * The dependencies of the task being built, in order, each once: an array
 * searched while short (a Set cleared for every task reallocates its table
 * each time), with a Set beside it once long.
 */
class DependencyList {
  private readonly keys: string[] = [];
  private set: Set<string> | null = null;

  add(key: string): void {
    if (this.set !== null) {
      if (this.set.has(key)) return;
      this.set.add(key);
    } else {
      if (this.keys.includes(key)) return;
      if (this.keys.length >= 32) this.set = new Set([...this.keys, key]);
    }
    this.keys.push(key);
  }

  /** The list (an array of its exact size), leaving this one empty for the next task. */
  take(): readonly string[] {
    if (this.keys.length === 0) return NO_DEPENDENCIES;
    const out = this.keys.slice();
    this.keys.length = 0;
    this.set = null;
    return out;
  }
}

/**
 * Why the options shared by a submission's tasks are wrong, or null. Checked
 * at the call: the scheduler would refuse them later, and since options are not
 * part of a pure key, the refusal would stick to the key.
 */
export function taskOptionsProblem(o: GivenGraphOptions): string | null {
  if (o.retries !== undefined && (!Number.isInteger(o.retries) || o.retries < 0)) {
    return `retries must be an integer >= 0, got ${showValue(o.retries)}`;
  }
  if (
    o.priority !== undefined &&
    (typeof o.priority !== "number" || !Number.isFinite(o.priority))
  ) {
    return `priority must be a finite number, got ${showValue(o.priority)}`;
  }
  if (o.resources !== undefined) {
    const problem = resourcesProblem(o.resources);
    if (problem !== null) return `resources ${problem}`;
  }
  if (o.workers !== undefined) {
    const problem = workersProblem(workersOption(o));
    if (problem !== null) return `workers ${problem}`;
  }
  if (o.allowOtherWorkers !== undefined && typeof o.allowOtherWorkers !== "boolean") {
    return `allowOtherWorkers must be a boolean, got ${showValue(o.allowOtherWorkers)}`;
  }
  if (o.allowOtherWorkers === true && o.workers === undefined) {
    return "allowOtherWorkers needs workers";
  }
  return null;
}

/** Copy the per-task options of `options` onto an `update-graph` task. */
export function setTaskOptions(
  task: { -readonly [K in keyof GraphTask]: GraphTask[K] },
  options: GivenGraphOptions,
): void {
  if (options.retries !== undefined) task.retries = options.retries;
  if (options.resources !== undefined) task.resources = options.resources;
  if (options.priority !== undefined) task.priority = options.priority;
  const workers = workersOption(options);
  if (workers !== undefined) {
    task.workers = workers;
    if (options.allowOtherWorkers === true) task.allowOtherWorkers = true;
  }
}

/**
 * Turn a graph into `update-graph` tasks. `owner` is the client whose futures
 * may appear as arguments; `op` names the calling method in errors. Throws a
 * TypeError naming a bad entry, a RangeError for bad `options`.
 */
export function buildGraph(
  graph: Graph,
  owner: object,
  given: GraphOptions = {},
  op = "compute",
): BuiltGraph {
  if (typeof given !== "object" || given === null || Array.isArray(given)) {
    throw new TypeError(`${op}: options must be an object, got ${showValue(given)}`);
  }
  const options = nullsAsDefaults(given, GRAPH_NULL_DEFAULTS);
  const optionsProblem = taskOptionsProblem(options);
  if (optionsProblem !== null) throw new RangeError(`${op}: ${optionsProblem}`);
  // A promise (an async builder not awaited) or a Set has no keys to read: it was
  // computed as an empty graph, `{}` given back without a word.
  if (typeof (graph as { then?: unknown } | null)?.then === "function") {
    throw new TypeError(`${op}: the graph is a promise: await it, and give what it resolves to`);
  }
  // An object inheriting a Map's methods without being one has no entries to read.
  if (
    typeof graph !== "object" ||
    graph === null ||
    Array.isArray(graph) ||
    graph instanceof Set ||
    (graph instanceof Map && !isMapObject(graph))
  ) {
    throw new TypeError(
      `${op}: the graph must be an object {key: [fn, ...args]} or a Map of key to task, got ${graph instanceof Set ? "a Set" : showValue(graph)}`,
    );
  }
  const literals = new Map<string, unknown>();
  /** The keys whose value is a string not wrapped with `literal`: aliases if it is a key. */
  const strings: string[] = [];
  /** Every key, in graph order. */
  const order: string[] = [];
  const taskKeys: string[] = [];
  const taskEntries: GraphTaskEntry[] = [];
  const sort = (key: unknown, v: unknown): void => {
    if (typeof key !== "string") {
      throw new TypeError(`${op}: graph key ${String(key)} must be a string`);
    }
    // Workers refuse news of an empty key: its task would run and never be heard of.
    if (key === "") throw new TypeError(`${op}: a graph key must be a non-empty string`);
    const problem = keyProblem(key);
    if (problem !== null) throw new TypeError(`${op}: graph key ${JSON.stringify(key)} ${problem}`);
    order.push(key);
    if (isTaskEntry(v)) {
      taskKeys.push(key);
      taskEntries.push(v);
    } else {
      if (typeof v === "string") strings.push(key);
      const value = isLiteralWrapper(v) ? v.__weftLiteral : v;
      literals.set(key, checkedCopyOfLiteral(value, key, op));
    }
  };
  let hasKey: (k: string) => boolean;
  if (isMapObject(graph)) {
    // What it holds, as the walks of its values read a Map (see collectionEntries.ts).
    for (const [key, v] of mapEntries(graph as ReadonlyMap<unknown, unknown>)) sort(key, v);
    hasKey = (k) => graph.has(k);
  } else {
    const record = graph as Readonly<Record<string, unknown>>;
    for (const key of Object.keys(record)) sort(key, record[key]);
    hasKey = (k) => Object.hasOwn(record, k);
  }
  /** Keys used other than as a task's dependency: literals inlined, aliases and what they name. */
  const usedOtherwise = new Set<string>();
  const aliases =
    strings.length === 0 ? NO_ALIASES : aliasesOf(strings, literals, hasKey, usedOtherwise, op);
  const tasks = new Map<string, GraphTask>();
  // One replacer for the whole graph, reading the task being built.
  let key = "";
  const deps = new DependencyList();
  const what = (): string => `${op}: graph key ${JSON.stringify(key)}`;
  const refer = (k: string): unknown => {
    if (literals.size > 0 && literals.has(k)) {
      usedOtherwise.add(k);
      return literals.get(k);
    }
    const target = aliases.size > 0 ? aliases.get(k) : undefined;
    if (target !== undefined) {
      usedOtherwise.add(k);
      deps.add(target);
      return taskRef(target);
    }
    deps.add(k);
    return taskRef(k);
  };
  const replace = (
    v: string | TaskRef | Future,
    parent: ArgPath | null,
    seg: number | string | null,
  ): unknown => {
    if (typeof v === "string") return hasKey(v) ? refer(v) : KEEP;
    if (v instanceof Future) {
      const futureKey = argumentFutureKey(v, owner, what(), formatPath(pathOf(parent, seg)));
      deps.add(futureKey);
      return taskRef(futureKey);
    }
    return refer(v.__weftRef);
  };
  const mapper = new ArgMapper(replace, what);
  for (let i = 0; i < taskKeys.length; i++) {
    const k = taskKeys[i];
    const entry = taskEntries[i];
    key = k;
    const head = entry[0];
    const fn = taskName(head, what());
    const args = mapper.map(entry.slice(1)) as unknown[];
    const task: { -readonly [K in keyof GraphTask]: GraphTask[K] } = {
      spec: { fn, args },
      dependencies: deps.take(),
    };
    setTaskOptions(task, options);
    tasks.set(k, task);
  }
  // Only needed when no keys are named: a set of every used key is not free for a big graph.
  let unused: readonly string[] | null = null;
  let sinks: readonly string[] | null = null;
  return {
    tasks,
    literals,
    aliases,
    get unusedKeys() {
      unused ??= unusedKeysOf(order, tasks, aliases, usedOtherwise, op);
      return unused;
    },
    get sinks() {
      sinks ??=
        literals.size === 0 ? this.unusedKeys : this.unusedKeys.filter((k) => !literals.has(k));
      return sinks;
    },
  };
}

const NO_ALIASES: ReadonlyMap<string, string> = new Map();

/**
 * The aliases of tasks among the keys `strings` (whose values, in `literals`,
 * are strings): those whose string is a key of the graph (`hasKey`), each with
 * the task at the end of its chain (`{z: "y", y: "x", x: [...]}`: z and y stand
 * for x). They are taken out of `literals`; an alias of a literal gets that
 * literal's value there instead. The keys they name are added to `used`.
 * Throws a TypeError naming a cycle of aliases (`{a: "b", b: "a"}`).
 */
function aliasesOf(
  strings: readonly string[],
  literals: Map<string, unknown>,
  hasKey: (k: string) => boolean,
  used: Set<string>,
  op: string,
): Map<string, string> {
  const named = new Map<string, string>();
  for (const key of strings) {
    const value = literals.get(key) as string;
    if (!hasKey(value)) continue;
    named.set(key, value);
    used.add(value);
  }
  // Where each alias's chain ends: each chain walked once, up to a key whose end
  // is known (a chain of n aliases walked from each was O(n²), its cycle check O(n³)).
  const ends = new Map<string, string>();
  for (const key of named.keys()) {
    if (ends.has(key)) continue;
    const chain = [key];
    const positions = new Map<string, number>([[key, 0]]);
    let target = named.get(key) as string;
    while (named.has(target) && !ends.has(target)) {
      const at = positions.get(target);
      if (at !== undefined)
        throw new TypeError(
          `${op}: the graph has a cycle: ${showCycle([...chain.slice(at), target])}`,
        );
      positions.set(target, chain.length);
      chain.push(target);
      target = named.get(target) as string;
    }
    const end = ends.get(target) ?? target;
    for (const k of chain) ends.set(k, end);
  }
  const out = new Map<string, string>();
  for (const key of named.keys()) {
    const target = ends.get(key) as string;
    // Of a literal: a literal itself, of the same value.
    if (literals.has(target)) {
      literals.set(key, literals.get(target));
    } else {
      out.set(key, target);
      literals.delete(key);
    }
  }
  return out;
}

/**
 * The keys that no task of `tasks` uses (as a dependency, or a literal inlined
 * into its arguments) and no alias names (`usedOtherwise` has those used so),
 * in graph order `order`: the tasks and aliases nothing depends on and the
 * literals nothing uses (`{a: 5}` computes to `{a: 5}`). Throws a TypeError naming a cycle when some tasks are not needed
 * by any of them: those lie on or behind a cycle that nothing outside depends
 * on, which would otherwise be left out silently (named keys reach the
 * scheduler, which reports cycles).
 */
function unusedKeysOf(
  order: readonly string[],
  tasks: ReadonlyMap<string, GraphTask>,
  aliases: ReadonlyMap<string, string>,
  usedOtherwise: ReadonlySet<string>,
  op: string,
): string[] {
  const used = new Set<string>(usedOtherwise);
  for (const task of tasks.values()) for (const dep of task.dependencies) used.add(dep);
  const unused = order.filter((k) => !used.has(k));
  const reached = neededTasks(
    tasks,
    aliases.size === 0 ? unused : unused.map((k) => aliases.get(k) ?? k),
  );
  if (reached.size < tasks.size) {
    throw new TypeError(`${op}: the graph has a cycle: ${unreachedCycle(tasks, reached)}`);
  }
  return unused;
}

/**
 * A cycle among the tasks no sink needs, as `a → b → a`: each of them has a
 * dependent (it is not a sink) and every dependent is one of them too (it
 * would be needed otherwise), so following dependents from any ends in one.
 */
function unreachedCycle(
  tasks: ReadonlyMap<string, GraphTask>,
  reached: ReadonlySet<string>,
): string {
  const dependentOf = new Map<string, string>();
  for (const [key, task] of tasks) {
    if (reached.has(key)) continue;
    for (const dep of task.dependencies) if (tasks.has(dep)) dependentOf.set(dep, key);
  }
  const path: string[] = [];
  const at = new Map<string, number>();
  let key = dependentOf.keys().next().value as string;
  while (!at.has(key)) {
    at.set(key, path.length);
    path.push(key);
    key = dependentOf.get(key) as string;
  }
  // Found walking up to dependents: reversed, each task is followed by one it depends on.
  return showCycle([...path.slice(at.get(key)), key].reverse());
}

/**
 * The tasks computing `keys` of `graph` runs (default keys: the sinks, so every
 * task), in graph order: the tasks they need, themselves included. For progress
 * displays and checks before submitting; throws the TypeError `compute` would
 * for a bad graph.
 */
export function tasksToRun(graph: Graph, keys?: readonly string[]): GraphTask[] {
  const built = buildGraph(graph, {});
  let run: ReadonlySet<string> | ReadonlyMap<string, GraphTask>;
  if (keys === undefined) {
    void built.sinks; // checks that every task is needed
    run = built.tasks;
  } else {
    for (const key of keys) {
      if (!built.tasks.has(key) && !built.literals.has(key) && !built.aliases.has(key)) {
        throw new TypeError(`compute: the graph has no key ${showValue(key, 200)}`);
      }
    }
    run = neededTasks(
      built.tasks,
      keys.map((k) => built.aliases.get(k) ?? k),
    );
  }
  // buildGraph leaves a cycle that a task needs to the scheduler (which rejects
  // the graph): said here, it is said before any cluster starts.
  const cycle = cycleAmong(built.tasks, run.keys());
  if (cycle !== null) throw new TypeError(`compute: the graph has a cycle: ${showCycle(cycle)}`);
  return [...built.tasks].filter(([key]) => run.has(key)).map(([, task]) => task);
}

/**
 * A cycle among the tasks of `tasks` that `roots` need, themselves included, as
 * its keys in order, each followed by one it depends on, the first again at the
 * end (`[a, b, a]`); null if there is none. Depth first, without recursion: a
 * chain of 100,000 tasks would overflow the stack.
 */
function cycleAmong(
  tasks: ReadonlyMap<string, GraphTask>,
  roots: Iterable<string>,
): string[] | null {
  /** 1: on the path being walked; 2: done (no cycle through it). */
  const mark = new Map<string, 1 | 2>();
  const path: string[] = [];
  const next: number[] = [];
  for (const root of roots) {
    if (mark.has(root)) continue;
    mark.set(root, 1);
    path.push(root);
    next.push(0);
    while (path.length > 0) {
      const top = path.length - 1;
      const deps = (tasks.get(path[top]) as GraphTask).dependencies;
      const i = next[top]++;
      if (i === deps.length) {
        mark.set(path[top], 2);
        path.pop();
        next.pop();
        continue;
      }
      const dep = deps[i];
      if (!tasks.has(dep)) continue; // a future's or a literal's key
      const m = mark.get(dep);
      if (m === 1) return [...path.slice(path.indexOf(dep)), dep];
      if (m === undefined) {
        mark.set(dep, 1);
        path.push(dep);
        next.push(0);
      }
    }
  }
  return null;
}

/** The keys of the tasks of `tasks` that `roots` need, themselves included. */
function neededTasks(tasks: ReadonlyMap<string, GraphTask>, roots: readonly string[]): Set<string> {
  const needed = new Set<string>();
  const stack = roots.slice();
  while (stack.length > 0) {
    const key = stack.pop() as string;
    const task = tasks.get(key);
    // Keys of futures and literals are dependencies or roots too, but not tasks of this graph.
    if (task === undefined || needed.has(key)) continue;
    needed.add(key);
    for (const dep of task.dependencies) stack.push(dep);
  }
  return needed;
}
