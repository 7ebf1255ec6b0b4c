/** Counters of one simulated run: events, faults injected, and (optionally) time in each machine. */

import { emptyFaultCounts, type FaultKind } from "./faults.ts";

/**
 * What the `scatter` workload counts (all zero in the other workloads), in the order
 * they are reported: `values` the client scattered; `copies` workers stored;
 * `unreachable`, `update_data` requests that found no live worker (dead, or the
 * network failed); `resent`, values sent to another worker after every worker
 * given them failed; `dropped`, values no worker stored (the scheduler never
 * hears of them); `rejected`, keys the scheduler rejected in `data-updated`;
 * `departedHolder`, keys whose `update-data` named a worker that had died since it
 * stored the value but that the scheduler still counted, and `removedHolder`, one
 * it had removed; `holderDiedWhileNeeded`, deaths of a worker holding a scattered
 * value that tasks waiting at the scheduler needed; `lost`, scattered keys the
 * scheduler lost with their last holder (as the scatter ledger checked); and
 * `cancelledWanted`, wanted keys that ended cancelled because scattered data they
 * need was lost.
 */
export const SCATTER_COUNTS = [
  "values",
  "copies",
  "unreachable",
  "resent",
  "dropped",
  "rejected",
  "departedHolder",
  "removedHolder",
  "holderDiedWhileNeeded",
  "lost",
  "cancelledWanted",
] as const;

/** One scatter counter. */
export type ScatterCount = (typeof SCATTER_COUNTS)[number];

/** A counter of each of `names`, all zero. */
function zeroCounts<K extends string>(names: readonly K[]): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const k of names) out[k] = 0;
  return out;
}

/** A fresh set of scatter counters, all zero. */
export function emptyScatterCounts(): Record<ScatterCount, number> {
  return zeroCounts(SCATTER_COUNTS);
}

/**
 * What the `scatter` workload's `replicate` requests met (all zero elsewhere, and
 * in the runs that do not replicate), in the order they are reported: `requests`
 * the client sent; `copiesAsked`, copies of a key the scheduler asked a worker to
 * fetch (`acquire-replicas`); `copiesArrived`, those whose `add-keys` it took;
 * `copiesDropped`, copies beyond `n` it asked a worker to drop (`remove-replicas`);
 * `rebalances` the client sent, and the `moves` they made (a giver asked to drop
 * its copy once the taker's arrived); `retirements` the client asked for, the
 * workers `retired` and those whose retirement failed (`retireFailed`); the
 * failures the answers gave, by kind of reason: `failedNotInMemory` (a key not in
 * memory when asked), `failedNoWorker` (no allowed worker running),
 * `failedTargetLeft` (a worker asked for a copy left first), `failedFetch` (it
 * could not fetch the copy), `failedKeyLost` (the key left memory meanwhile),
 * `failedActor` (the key is an actor, which stays where it lives); and
 * the races the workload is there for: `targetDied` (a worker died with copies to
 * fetch), `holderDied` (a holder of a key died while copies of it were on their
 * way), `releasedWhileCopying` (the scheduler took the client's release of a key
 * while copies of it were on their way), `copyFetchFailed` (a worker asked for a
 * copy reported it could not fetch it: `task-erred`, `fetchFailed`).
 */
export const REPLICATE_COUNTS = [
  "requests",
  "copiesAsked",
  "copiesArrived",
  "copiesDropped",
  "rebalances",
  "moves",
  "retirements",
  "retired",
  "retireFailed",
  "failedNotInMemory",
  "failedNoWorker",
  "failedTargetLeft",
  "failedFetch",
  "failedKeyLost",
  "failedActor",
  "targetDied",
  "holderDied",
  "releasedWhileCopying",
  "copyFetchFailed",
] as const;

/** One replicate counter. */
export type ReplicateCount = (typeof REPLICATE_COUNTS)[number];

/** A fresh set of replicate counters, all zero. */
export function emptyReplicateCounts(): Record<ReplicateCount, number> {
  return zeroCounts(REPLICATE_COUNTS);
}

/**
 * What the actors of a run met (all zero when it has none), in the order they
 * are reported: `actors`, actor tasks in the workload; `actorRuns`, actor tasks
 * run to completion (reruns included); `handlesServed`, handles a worker's
 * `get_data` gave a peer in place of an actor; `handleInputs`, tasks run with a
 * fetched handle as an input; `localInputs`, tasks run with an actor held on
 * their own worker as an input; `actorsLost`, wanted keys accepted as erred
 * because the worker holding an actor they are or need was lost.
 */
export const ACTOR_COUNTS = [
  "actors",
  "actorRuns",
  "handlesServed",
  "handleInputs",
  "localInputs",
  "actorsLost",
] as const;

/** One actor counter. */
export type ActorCount = (typeof ACTOR_COUNTS)[number];

/** A fresh set of actor counters, all zero. */
export function emptyActorCounts(): Record<ActorCount, number> {
  return zeroCounts(ACTOR_COUNTS);
}

/** What a run counted. */
export class SimStats {
  /** Events the event queue fired. */
  events = 0;
  /** Stimuli handled by the scheduler state machine. */
  schedulerStimuli = 0;
  /** Stimuli handled by all worker state machines. */
  workerStimuli = 0;
  /** Microseconds spent inside the scheduler state machine (when timing is on). */
  schedulerMicros = 0;
  /** Microseconds spent inside worker state machines (when timing is on). */
  workerMicros = 0;
  /** Tasks executed to completion on workers (reruns included). */
  executions = 0;
  /** Peer transfers that delivered data. */
  transfers = 0;
  /** Restarts of the cluster the client asked for (and got `restarted` for). */
  restarts = 0;
  /** Workers the client restarted alone (`restart-workers`), as the scheduler answered. */
  workerRestarts = 0;
  /** Virtual seconds at the end. */
  virtualTime = 0;
  /** Steals the scheduler asked of workers (work stealing's and the steal fault's). */
  stealsRequested = 0;
  /** Steals the victims confirmed, which moved the task. */
  stealsConfirmed = 0;
  /** Replicas the Active Memory Manager asked workers to drop. */
  replicasDropped = 0;
  /** Faults injected, by kind. */
  readonly faults: Record<FaultKind, number> = emptyFaultCounts();
  /** What the `scatter` workload's client and checks saw (see {@link SCATTER_COUNTS}). */
  readonly scatter: Record<ScatterCount, number> = emptyScatterCounts();
  /** What the `scatter` workload's `replicate` requests met (see {@link REPLICATE_COUNTS}). */
  readonly replicate: Record<ReplicateCount, number> = emptyReplicateCounts();
  /** What the actors met (see {@link ACTOR_COUNTS}). */
  readonly actors: Record<ActorCount, number> = emptyActorCounts();
}
