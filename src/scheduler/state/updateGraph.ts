/**
 * `update-graph` (Dask's `update_graph` and `_create_taskstate_from_graph`):
 * check the submitted tasks, create the new ones with their priorities, note
 * what the client wants, and recommend the new tasks to `waiting`.
 */

import type { GraphTask, UpdateGraphMsg } from "../../protocol/messagesClient.ts";
import { taskArgsProblem, taskSpecProblem } from "../../protocol/messagesTaskSpec.ts";
import { comparePriority } from "../../util/priority.ts";
import { showCycle } from "../../util/showCycle.ts";
import { showValue } from "../../util/showValue.ts";
import { clientDesiresKeys } from "./clientHandlers.ts";
import { isStringArray, resourcesProblem, workersProblem } from "./eventValidation.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { itemsOf, setAdd } from "./sets.ts";
import { TaskState } from "./taskState.ts";

const NO_KEYS: readonly string[] = [];

/** At most this many problems are quoted in the error sent back for a bad graph. */
const MAX_PROBLEMS_QUOTED = 5;

/** True if no argument is an object (so none holds a task reference). */
function allPrimitive(args: readonly unknown[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (typeof a === "object" && a !== null) return false;
  }
  return true;
}

/**
 * Why `entry` (the task `key` of an update-graph) is malformed, or null. A task
 * that throws when read (a getter, a Proxy: from a program handing the machine
 * objects, not from the wire) is malformed too, not a failure of the machine.
 */
function entryProblem(key: string, entry: unknown): string | null {
  if (key === "") return "a task key must be a non-empty string";
  try {
    return readableEntryProblem(key, entry);
  } catch (err) {
    return `task '${key}' cannot be read: ${err instanceof Error ? `${err.name}: ${err.message}` : showValue(err)}`;
  }
}

/** {@link entryProblem} of a task key that is not empty; may throw reading `entry`. */
function readableEntryProblem(key: string, entry: unknown): string | null {
  if (typeof entry !== "object" || entry === null) return `task '${key}' must be an object`;
  const e = entry as Partial<Record<keyof GraphTask, unknown>>;
  const specProblem = taskSpecProblem(e.spec);
  if (specProblem !== null) return `task '${key}': ${specProblem}`;
  const deps = e.dependencies;
  if (!isStringArray(deps)) {
    return `task '${key}': dependencies must be an array of keys`;
  }
  if (deps.includes(key)) return `task '${key}' depends on itself`;
  const args = (e.spec as { args: readonly unknown[] }).args;
  if (!allPrimitive(args)) {
    const problem = taskArgsProblem(args, deps);
    if (problem !== null) return `task '${key}' ${problem}`;
  }
  if (
    e.priority !== undefined &&
    (typeof e.priority !== "number" || !Number.isFinite(e.priority))
  ) {
    return `task '${key}': priority must be a finite number`;
  }
  if (e.retries !== undefined && (!Number.isInteger(e.retries) || (e.retries as number) < 0)) {
    return `task '${key}': retries must be an integer ≥ 0`;
  }
  if (e.resources !== undefined) {
    const problem = resourcesProblem(e.resources);
    if (problem !== null) return `task '${key}': resources ${problem}`;
  }
  if (e.workers !== undefined) {
    const problem = workersProblem(e.workers);
    if (problem !== null) return `task '${key}': workers ${problem}`;
  }
  if (e.allowOtherWorkers !== undefined && typeof e.allowOtherWorkers !== "boolean") {
    return `task '${key}': allowOtherWorkers must be a boolean`;
  }
  if (e.actor !== undefined && typeof e.actor !== "boolean") {
    return `task '${key}': actor must be a boolean`;
  }
  if (
    e.annotations !== undefined &&
    (typeof e.annotations !== "object" || e.annotations === null || Array.isArray(e.annotations))
  ) {
    return `task '${key}': annotations must be an object`;
  }
  return null;
}

/** The outcome of walking the submitted graph from the wanted keys. */
interface Walk {
  /** New tasks (not yet known to the scheduler) the wanted keys need, dependencies first. */
  readonly order: string[];
  /** The entry of each key of `order`, at the same index. */
  readonly entries: (GraphTask | undefined)[];
  /** New keys that need a key nobody knows: key → that missing key. */
  readonly lost: Map<string, string>;
  /** Malformed tasks and cycles. */
  readonly problems: string[];
}

/**
 * Depth-first walk of the new tasks reachable from `wanted`, giving their
 * post-order (dependencies before dependents, one wanted key's subtree after
 * another: the graph order of priorities), and finding malformed entries,
 * cycles, and keys that depend on unknown keys.
 */
function walkGraph(s: SchedulerState, tasks: UpdateGraphMsg["tasks"], wanted: string[]): Walk {
  const order: string[] = [];
  const entries: (GraphTask | undefined)[] = [];
  const lost = new Map<string, string>();
  const problems: string[] = [];
  /** 1: on the walk's path; 2: finished. */
  const mark = new Map<string, 1 | 2>();
  const depsOf = (entry: GraphTask | undefined): readonly string[] => {
    try {
      const deps = entry?.dependencies;
      return Array.isArray(deps) ? deps : NO_KEYS;
    } catch {
      return NO_KEYS; // a task that throws when read: entryProblem says so
    }
  };

  for (const root of wanted) {
    if (s.tasks.has(root) || mark.has(root)) continue;
    if (!tasks.has(root)) {
      lost.set(root, root);
      continue;
    }
    // The path from the root: each key, its entry, its dependencies, the next one to visit.
    const rootEntry = tasks.get(root);
    const keys: string[] = [root];
    const pathEntries: (GraphTask | undefined)[] = [rootEntry];
    const depLists: (readonly string[])[] = [depsOf(rootEntry)];
    const next: number[] = [0];
    mark.set(root, 1);
    const problem = entryProblem(root, rootEntry);
    if (problem !== null) problems.push(problem);
    while (keys.length > 0) {
      const top = keys.length - 1;
      const key = keys[top];
      const deps = depLists[top];
      const i = next[top]++;
      if (i < deps.length) {
        const dep = deps[i];
        // Marked keys are new (the known ones are never walked): test those first.
        const m = mark.get(dep);
        if (m === 2) continue;
        if (m === 1) {
          problems.push(`cycle: ${showCycle([...keys.slice(keys.indexOf(dep)), dep])}`);
          continue;
        }
        if (s.tasks.has(dep)) continue;
        const entry = tasks.get(dep);
        if (entry === undefined && !tasks.has(dep)) {
          if (!lost.has(key)) lost.set(key, dep);
          continue;
        }
        mark.set(dep, 1);
        const depProblem = entryProblem(dep, entry);
        if (depProblem !== null) problems.push(depProblem);
        keys.push(dep);
        pathEntries.push(entry);
        depLists.push(depsOf(entry));
        next.push(0);
        continue;
      }
      keys.pop();
      const entry = pathEntries.pop();
      depLists.pop();
      next.pop();
      mark.set(key, 2);
      order.push(key);
      entries.push(entry);
      if (lost.size > 0 && !lost.has(key)) {
        for (const dep of deps) {
          const missing = lost.get(dep);
          if (missing !== undefined) {
            lost.set(key, missing);
            break;
          }
        }
      }
    }
  }
  return { order, entries, lost, problems };
}

/**
 * The new tasks the wanted keys that can be computed need: not those only lost
 * keys need, which nobody would ever release (Dask drops them too).
 */
function neededNewTasks(walk: Walk, wanted: readonly string[]): Set<string> {
  const entryOf = new Map<string, GraphTask>();
  for (let i = 0; i < walk.order.length; i++) {
    if (!walk.lost.has(walk.order[i])) entryOf.set(walk.order[i], walk.entries[i] as GraphTask);
  }
  const needed = new Set<string>();
  const stack = wanted.filter((key) => entryOf.has(key));
  while (stack.length > 0) {
    const key = stack.pop() as string;
    if (needed.has(key)) continue;
    needed.add(key);
    for (const dep of (entryOf.get(key) as GraphTask).dependencies) {
      if (entryOf.has(dep) && !needed.has(dep)) stack.push(dep);
    }
  }
  return needed;
}

/**
 * The new tasks to compute when some of them err at once (an input is erred,
 * or is a new task that errs): those wanted that do not, and the new inputs of
 * those. An input only such tasks need stays released, where Dask computes it
 * for nobody (a retry of the failed input sends it to waiting with them).
 * Null when no new task errs: all of them run. `created` is in graph order,
 * inputs first.
 */
function newTasksToRun(
  created: readonly TaskState[],
  wanted: readonly string[],
): Set<TaskState> | null {
  let doomed = null as Set<TaskState> | null;
  for (const ts of created) {
    for (const dts of itemsOf(ts.dependencies)) {
      if (dts.state === "erred" || doomed?.has(dts) === true) {
        (doomed ??= new Set()).add(ts);
        break;
      }
    }
  }
  if (doomed === null) return null;
  const wantedKeys = new Set(wanted);
  const toRun = new Set<TaskState>();
  // Dependents come after their inputs in `created`: walk it backwards.
  for (let i = created.length - 1; i >= 0; i--) {
    const ts = created[i];
    if (doomed.has(ts)) continue;
    let needed = wantedKeys.has(ts.key);
    if (!needed) {
      for (const dts of itemsOf(ts.dependents)) {
        if (toRun.has(dts)) {
          needed = true;
          break;
        }
      }
    }
    if (needed) toRun.add(ts);
  }
  return toRun;
}

/**
 * `update-graph`. A malformed graph (a bad task, a cycle) changes nothing and
 * every wanted key is answered with `task-erred`; wanted keys that need a key
 * nobody knows are answered with `cancelled-keys` ("lost dependencies"); the
 * rest is created, wanted and recommended to `waiting`. Keys already known
 * keep their task; those already in memory or erred are reported at once.
 */
export function updateGraph(s: SchedulerState, msg: UpdateGraphMsg): void {
  const cs = s.ensureClient(msg.clientId);
  if (msg.submission !== undefined) cs.lastSubmission = msg.submission;
  const wanted = [...new Set(msg.keys)];
  const walk = walkGraph(s, msg.tasks, wanted);

  if (walk.problems.length > 0) {
    const quoted = walk.problems.slice(0, MAX_PROBLEMS_QUOTED).join("; ");
    const more =
      walk.problems.length > MAX_PROBLEMS_QUOTED
        ? ` (and ${walk.problems.length - MAX_PROBLEMS_QUOTED} more)`
        : "";
    const text = `InvalidGraph: update-graph rejected: ${quoted}${more}`;
    for (const key of wanted) {
      s.sendToClient(cs, {
        op: "task-erred",
        key,
        blame: key,
        exception: { name: "InvalidGraph", message: text },
        traceback: null,
        exceptionText: text,
        tracebackText: "",
        stimulusId: s.stimulusId,
      });
    }
    return;
  }

  const lostWanted = wanted.filter((key) => walk.lost.has(key));
  if (lostWanted.length > 0) {
    const missing = [...new Set(lostWanted.map((key) => walk.lost.get(key)))].join(", ");
    s.sendToClient(cs, {
      op: "cancelled-keys",
      keys: lostWanted,
      reason: `lost dependencies: ${missing} unknown`,
      stimulusId: s.stimulusId,
      submission: cs.lastSubmission,
    });
  }

  // Create the new tasks, dependencies first, with their priorities.
  const generation = ++s.generation;
  const created: TaskState[] = [];
  /** Every new task has the same user priority: then they are in priority order already. */
  let uniform = true;
  const needed = walk.lost.size > 0 ? neededNewTasks(walk, wanted) : null;
  for (let i = 0; i < walk.order.length; i++) {
    const key = walk.order[i];
    if (needed !== null && !needed.has(key)) continue;
    // Well formed: the walk found no problem.
    const entry = walk.entries[i] as GraphTask;
    const ts = new TaskState(key, entry.spec, s.taskGroupOf(key));
    ts.priority = [-(entry.priority ?? 0), generation, created.length];
    if (created.length > 0 && ts.priority[0] !== created[0].priority[0]) uniform = false;
    ts.retries = entry.retries ?? 0;
    if (entry.resources !== undefined && Object.keys(entry.resources).length > 0) {
      ts.resourceRestrictions = { ...entry.resources };
    }
    if (entry.workers !== undefined) {
      ts.workerRestrictions = {
        names: new Set(entry.workers),
        loose: entry.allowOtherWorkers === true,
      };
    }
    if (entry.annotations !== undefined) ts.annotations = entry.annotations;
    ts.actor = entry.actor === true;
    // The walk's order puts dependencies first: each is known or created by now.
    for (const depKey of entry.dependencies) {
      const dts = s.tasks.get(depKey) as TaskState;
      ts.dependencies = setAdd(ts.dependencies, dts);
      dts.dependents = setAdd(dts.dependents, ts);
      ts.group.addDependency(dts.group);
    }
    s.tasks.set(key, ts);
    created.push(ts);
  }

  s.onGraphUpdate({
    client: msg.clientId,
    keys: wanted,
    tasks: created.map((ts) => ts.key),
    stimulusId: s.stimulusId,
  });

  const toRun = newTasksToRun(created, wanted);
  // Worst priority first: the work list is last in, first out.
  // (Priorities are distinct: with one user priority, the reverse of the creation order.)
  if (uniform) {
    for (let i = created.length - 1; i >= 0; i--) {
      if (toRun === null || toRun.has(created[i])) s.recommend(created[i], "waiting");
    }
  } else {
    const byPriority = created.slice().sort((a, b) => comparePriority(b.priority, a.priority));
    for (const ts of byPriority) if (toRun === null || toRun.has(ts)) s.recommend(ts, "waiting");
  }

  // Also recommends known but released wanted keys to waiting (after the new
  // tasks, so ahead of them); new ones keep their place in the work list.
  clientDesiresKeys(
    s,
    cs,
    wanted.filter((key) => !walk.lost.has(key)),
  );
  for (const ts of created) {
    for (const dts of itemsOf(ts.dependencies)) {
      if (dts.exceptionBlame !== null) {
        ts.exceptionBlame = dts.exceptionBlame;
        s.recommend(ts, "erred");
        break;
      }
    }
  }
}
