/** Run many consecutive seeds and sum up what happened. */

import { unawaitedCallback } from "../util/unawaitedCallback.ts";
import type { FailureKind } from "./failure.ts";
import { emptyFaultCounts, type FaultKind } from "./faults.ts";
import type { SimOptions } from "./options.ts";
import { type SimResult, simulate } from "./simulation.ts";
import {
  type ActorCount,
  emptyActorCounts,
  emptyReplicateCounts,
  emptyScatterCounts,
  type ReplicateCount,
  type ScatterCount,
} from "./stats.ts";

/** What a batch of runs added up to. */
export interface SimSummary {
  /** Runs made. */
  runs: number;
  /** Runs whose checks all held. */
  passed: number;
  /** Runs that found a failure. */
  failed: number;
  /** Events fired, over all runs. */
  events: number;
  /** Tasks in the workloads, over all runs. */
  tasks: number;
  /** Runs whose client restarted the cluster. */
  restartedRuns: number;
  /** Runs whose client restarted a worker alone. */
  workerRestartedRuns: number;
  /** Faults injected, by kind, over all runs. */
  readonly faults: Record<FaultKind, number>;
  /** Steals the scheduler asked of workers, over all runs. */
  stealsRequested: number;
  /** Steals the victims confirmed, over all runs. */
  stealsConfirmed: number;
  /** Replicas the Active Memory Manager asked workers to drop, over all runs. */
  replicasDropped: number;
  /** The `scatter` workload's counters, over all runs. */
  readonly scatter: Record<ScatterCount, number>;
  /** Runs in which each `scatter` counter was not zero. */
  readonly scatterRuns: Record<ScatterCount, number>;
  /** The `scatter` workload's `replicate` counters, over all runs. */
  readonly replicate: Record<ReplicateCount, number>;
  /** Runs in which each `replicate` counter was not zero. */
  readonly replicateRuns: Record<ReplicateCount, number>;
  /** The actors' counters, over all runs. */
  readonly actors: Record<ActorCount, number>;
  /** Runs in which each actor counter was not zero. */
  readonly actorRuns: Record<ActorCount, number>;
  /** Failures by kind. */
  readonly failures: Partial<Record<FailureKind, number>>;
  /** The first failing seeds (at most 100). */
  readonly failingSeeds: number[];
  /** The first failing run, if any. */
  firstFailure: SimResult | null;
  /** Wall-clock seconds. */
  wallSeconds: number;
}

/** An empty summary. */
export function emptySummary(): SimSummary {
  return {
    runs: 0,
    passed: 0,
    failed: 0,
    events: 0,
    tasks: 0,
    restartedRuns: 0,
    workerRestartedRuns: 0,
    faults: emptyFaultCounts(),
    stealsRequested: 0,
    stealsConfirmed: 0,
    replicasDropped: 0,
    scatter: emptyScatterCounts(),
    scatterRuns: emptyScatterCounts(),
    replicate: emptyReplicateCounts(),
    replicateRuns: emptyReplicateCounts(),
    actors: emptyActorCounts(),
    actorRuns: emptyActorCounts(),
    failures: {},
    failingSeeds: [],
    firstFailure: null,
    wallSeconds: 0,
  };
}

/** Add one run to `s`. */
export function addResult(s: SimSummary, r: SimResult): void {
  s.runs++;
  s.events += r.stats.events;
  s.tasks += r.tasks;
  if (r.stats.restarts > 0) s.restartedRuns++;
  if (r.stats.workerRestarts > 0) s.workerRestartedRuns++;
  for (const k of Object.keys(r.stats.faults) as FaultKind[]) s.faults[k] += r.stats.faults[k];
  s.stealsRequested += r.stats.stealsRequested;
  s.stealsConfirmed += r.stats.stealsConfirmed;
  s.replicasDropped += r.stats.replicasDropped;
  for (const k of Object.keys(r.stats.scatter) as ScatterCount[]) {
    s.scatter[k] += r.stats.scatter[k];
    if (r.stats.scatter[k] > 0) s.scatterRuns[k]++;
  }
  for (const k of Object.keys(r.stats.replicate) as ReplicateCount[]) {
    s.replicate[k] += r.stats.replicate[k];
    if (r.stats.replicate[k] > 0) s.replicateRuns[k]++;
  }
  for (const k of Object.keys(r.stats.actors) as ActorCount[]) {
    s.actors[k] += r.stats.actors[k];
    if (r.stats.actors[k] > 0) s.actorRuns[k]++;
  }
  if (r.ok) {
    s.passed++;
    return;
  }
  s.failed++;
  const kind = r.failure?.kind ?? "raised";
  s.failures[kind] = (s.failures[kind] ?? 0) + 1;
  if (s.failingSeeds.length < 100) s.failingSeeds.push(r.seed);
  s.firstFailure ??= r;
}

/** Add the counts of `b` into `a` (for summaries of parallel batches). */
export function mergeSummary(a: SimSummary, b: SimSummary): void {
  a.runs += b.runs;
  a.passed += b.passed;
  a.failed += b.failed;
  a.events += b.events;
  a.tasks += b.tasks;
  a.restartedRuns += b.restartedRuns;
  a.workerRestartedRuns += b.workerRestartedRuns;
  for (const k of Object.keys(b.faults) as FaultKind[]) a.faults[k] += b.faults[k];
  a.stealsRequested += b.stealsRequested;
  a.stealsConfirmed += b.stealsConfirmed;
  a.replicasDropped += b.replicasDropped;
  for (const k of Object.keys(b.scatter) as ScatterCount[]) {
    a.scatter[k] += b.scatter[k];
    a.scatterRuns[k] += b.scatterRuns[k];
  }
  for (const k of Object.keys(b.replicate) as ReplicateCount[]) {
    a.replicate[k] += b.replicate[k];
    a.replicateRuns[k] += b.replicateRuns[k];
  }
  for (const k of Object.keys(b.actors) as ActorCount[]) {
    a.actors[k] += b.actors[k];
    a.actorRuns[k] += b.actorRuns[k];
  }
  for (const [k, v] of Object.entries(b.failures) as [FailureKind, number][]) {
    a.failures[k] = (a.failures[k] ?? 0) + v;
  }
  // The lowest 100 of both: capping before sorting kept the first batch's seeds only
  // (with the soak's interleaved threads, every other failing seed).
  a.failingSeeds.push(...b.failingSeeds);
  a.failingSeeds.sort((x, y) => x - y);
  a.failingSeeds.splice(100);
  if (
    b.firstFailure !== null &&
    (a.firstFailure === null || b.firstFailure.seed < a.firstFailure.seed)
  ) {
    a.firstFailure = b.firstFailure;
  }
}

/**
 * Whether seeds `from` … `from + count - 1` would pass `Number.MAX_SAFE_INTEGER`
 * (seeds are safe integers), decided without computing the sum, which could round.
 */
export function seedsPassSafeRange(from: number, count: number): boolean {
  return count - 1 > Number.MAX_SAFE_INTEGER - from;
}

/**
 * Run seeds `from`, `from + 1`, … (`count` of them) with the same options,
 * calling `onResult` after each. A run's failure is in its result and the
 * summary; what `onResult` throws ends the runs (the seeds after it are not
 * run) and is rethrown; a promise it returns that rejects is a process warning
 * (`unawaitedCallback`). A `from` or `count` that is not an integer ≥ 0, or seeds
 * beyond `Number.MAX_SAFE_INTEGER`, throw a RangeError before any run.
 */
export function runSeeds(
  base: Omit<SimOptions, "seed">,
  from: number,
  count: number,
  onResult?: (r: SimResult) => void,
): SimSummary {
  // A count of NaN, -1 or 1.5 ran no seed, or one more than asked, and passed.
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`count must be an integer ≥ 0, got ${count}`);
  }
  if (!Number.isSafeInteger(from) || from < 0) {
    throw new RangeError(`from must be an integer ≥ 0, got ${from}`);
  }
  if (seedsPassSafeRange(from, count)) {
    throw new RangeError(
      `seeds ${from} to ${from} + ${count} - 1 pass ${Number.MAX_SAFE_INTEGER} (seeds are safe integers)`,
    );
  }
  const t0 = performance.now();
  const s = emptySummary();
  const told = onResult && unawaitedCallback(onResult, "runSeeds: onResult");
  for (let seed = from; seed < from + count; seed++) {
    const r = simulate({ ...base, seed });
    addResult(s, r);
    told?.(r);
  }
  s.wallSeconds = (performance.now() - t0) / 1000;
  return s;
}
