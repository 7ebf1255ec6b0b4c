import type { DumpTask } from "../protocol/clusterDump.ts";
import { taskSnapshot } from "../protocol/daskJson/snapshot.ts";
import type { TaskState } from "../worker/state/taskState.ts";

/** The task fields a replay compares (the conformance snapshot's, under their Dask names). */
export const COMPARED_TASK_FIELDS = [
  "state",
  "previous",
  "next",
  "done",
  "priority",
  "run_id",
  "nbytes",
  "who_has",
  "coming_from",
  "dependencies",
  "dependents",
  "waiting_for_data",
  "waiters",
  "resource_restrictions",
  "exception_text",
] as const;

/** One differing field of a task. */
export interface FieldDifference {
  /** The field's name, as Dask's dump spells it (`who_has`, `state`, …). */
  readonly field: string;
  /** Its value in the dump. */
  readonly dumped: unknown;
  /** Its value after the replay. */
  readonly replayed: unknown;
}

/** A task whose replayed state differs from the dumped one. */
export interface TaskMismatch {
  /** The task's key. */
  readonly key: string;
  /** The dumped state, or null when the live worker had forgotten the task. */
  readonly dumped: string | null;
  /** The replayed state, or null when the replay has forgotten it. */
  readonly replayed: string | null;
  /** Every differing field (`state` included) when the task is on both sides. */
  readonly fields: readonly FieldDifference[];
}

/** Dask's dump drops falsy fields: compare with every falsy value as null. */
function falsyAsNull(v: unknown): unknown {
  if (v === null || v === undefined || v === false || v === 0 || v === "") return null;
  if (Array.isArray(v)) return v.length === 0 ? null : v;
  if (typeof v === "object" && Object.keys(v as object).length === 0) return null;
  return v;
}

function sorted(keys: Iterable<string>): string[] {
  return [...keys].sort();
}

/** A dumped task in the form of {@link taskSnapshot}. */
export function dumpedTaskSnapshot(t: DumpTask): Record<string, unknown> {
  return {
    state: t.state,
    previous: t.previous,
    next: t.next,
    done: t.done,
    priority: t.priority === null ? null : [...t.priority],
    run_id: t.runId,
    nbytes: t.nbytes,
    who_has: sorted(t.whoHas),
    coming_from: t.comingFrom,
    dependencies: sorted(t.dependencies.map((r) => r.key)),
    dependents: sorted(t.dependents.map((r) => r.key)),
    waiting_for_data: sorted(t.waitingForData.map((r) => r.key)),
    waiters: sorted(t.waiters.map((r) => r.key)),
    resource_restrictions: { ...t.resourceRestrictions },
    exception_text: t.exceptionText,
  };
}

/** A priority with its last element (the generation) shifted by `offset`. */
function shifted(priority: unknown, offset: number): unknown {
  if (offset === 0 || !Array.isArray(priority) || priority.length === 0) return priority;
  const out = [...priority];
  out[out.length - 1] = (out[out.length - 1] as number) + offset;
  return out;
}

/**
 * Differences between a dumped and a replayed task, field by field; the replayed
 * priority's generation is shifted by `generationOffset` first.
 */
export function taskDifferences(
  dumped: DumpTask,
  replayed: TaskState,
  generationOffset = 0,
): FieldDifference[] {
  const a = dumpedTaskSnapshot(dumped);
  const b = taskSnapshot(replayed);
  b.priority = shifted(b.priority, generationOffset);
  const out: FieldDifference[] = [];
  for (const field of COMPARED_TASK_FIELDS) {
    const x = falsyAsNull(a[field]);
    const y = falsyAsNull(b[field]);
    if (JSON.stringify(x) !== JSON.stringify(y)) out.push({ field, dumped: x, replayed: y });
  }
  return out;
}

/**
 * The most common difference between the dumped and replayed generation (last
 * priority element) of the tasks `comparable` accepts whose priorities agree
 * otherwise: 0 when the replay started with the worker, the worker's generation at
 * the stimulus log's start when it did not.
 */
export function generationOffset(
  dumped: ReadonlyMap<string, DumpTask>,
  replayed: ReadonlyMap<string, TaskState>,
  comparable: (key: string) => boolean,
): number {
  const votes = new Map<number, number>();
  for (const [key, d] of dumped) {
    const r = replayed.get(key)?.priority;
    const p = d.priority;
    if (!comparable(key) || r == null || p === null || p.length !== r.length || p.length === 0) {
      continue;
    }
    let samePrefix = true;
    for (let i = 0; i < p.length - 1; i++) if (p[i] !== r[i]) samePrefix = false;
    if (!samePrefix) continue;
    const off = p[p.length - 1] - (r[r.length - 1] as number);
    votes.set(off, (votes.get(off) ?? 0) + 1);
  }
  let best = 0;
  let bestVotes = 0;
  for (const [off, n] of votes) {
    if (n > bestVotes) {
      best = off;
      bestVotes = n;
    }
  }
  return best;
}

/** Result of comparing the tasks of a replay with the dump's. */
export interface TaskComparison {
  /** Tasks compared (on either side). */
  readonly compared: number;
  /** Tasks left out because their history began before the stimulus log. */
  readonly notComparable: number;
  /** The generation offset applied to replayed priorities. */
  readonly generationOffset: number;
  /** The tasks that differ, by key. */
  readonly mismatches: readonly TaskMismatch[];
}

/**
 * Compares every task of the dump and of the replay, except those `comparable`
 * rejects: missing on one side, or differing in a {@link COMPARED_TASK_FIELDS} field.
 * With `shiftGenerations` (a replay that did not start with the worker), replayed
 * priorities are compared after the {@link generationOffset}.
 */
export function compareTasks(
  dumped: ReadonlyMap<string, DumpTask>,
  replayed: ReadonlyMap<string, TaskState>,
  comparable: (key: string) => boolean,
  shiftGenerations = false,
): TaskComparison {
  const offset = shiftGenerations ? generationOffset(dumped, replayed, comparable) : 0;
  const keys = new Set([...dumped.keys(), ...replayed.keys()]);
  let compared = 0;
  let notComparable = 0;
  const mismatches: TaskMismatch[] = [];
  for (const key of sorted(keys)) {
    if (!comparable(key)) {
      notComparable++;
      continue;
    }
    compared++;
    const d = dumped.get(key);
    const r = replayed.get(key);
    if (d === undefined || r === undefined) {
      mismatches.push({ key, dumped: d?.state ?? null, replayed: r?.state ?? null, fields: [] });
      continue;
    }
    const fields = taskDifferences(d, r, offset);
    if (fields.length > 0) mismatches.push({ key, dumped: d.state, replayed: r.state, fields });
  }
  return { compared, notComparable, generationOffset: offset, mismatches };
}
