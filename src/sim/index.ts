/**
 * weft's deterministic cluster simulator: a `SchedulerState`, N
 * `WorkerState`s and a client on virtual time, joined by a seeded network,
 * with faults. See docs/sim.md.
 */

// The benchmark graphs: chainGraph, configuredGraph, mapGraph, shuffleGraph, treeGraph.
export * from "./benchmarkGraphs.ts";
export type { CheckInput } from "./checks.ts";
export type { SimCluster } from "./cluster.ts";
export { EventQueue } from "./eventQueue.ts";
export type { FailureKind, SimFailure } from "./failure.ts";
export {
  DEFAULT_FAULT_RATES,
  FAULT_DESCRIPTIONS,
  FAULT_KINDS,
  type FaultKind,
  type FaultRates,
  formatFaults,
  NO_FAULTS,
  parseFaults,
} from "./faults.ts";
export {
  GRAPH_TASK_DURATION,
  GRAPH_TASK_NBYTES,
  type GraphWorkloadOptions,
  graphWorkload,
  type TaskCost,
} from "./graphWorkload.ts";
export type { HookContext, SimHooks } from "./hooks.ts";
export { Network } from "./network.ts";
export {
  type ResolvedSimOptions,
  resolveSimOptions,
  SIM_DEFAULTS,
  SIM_WORKLOAD_KINDS,
  type SimOptions,
  WORKLOAD_KINDS,
  type WorkloadKind,
} from "./options.ts";
export { type RandomDagSpec, randomDag } from "./randomDag.ts";
export { replayCommand } from "./replay.ts";
export { MAX_REQUESTS, SimReplicator } from "./replicate.ts";
export {
  type CopyRecord,
  failureKind,
  type ReplicateFailureKind,
  ReplicateLedger,
  type ReplicateRecord,
} from "./replicateLedger.ts";
export {
  formatFailure,
  formatRunLine,
  formatShrink,
  formatSummaryTable,
  formatTally,
} from "./report.ts";
export { SimRng } from "./rng.ts";
export { addResult, emptySummary, mergeSummary, runSeeds, type SimSummary } from "./runMany.ts";
export { SCATTERED_ROOTS, scatterRoots } from "./scatter.ts";
export { type ScatterFate, ScatterLedger, type ScatterRecord } from "./scatterLedger.ts";
export { type ShrinkOptions, type ShrinkResult, shrink } from "./shrink.ts";
export { type ClientError, type KeyStatus, SimClient } from "./simClient.ts";
export { type ClientSink, SimScheduler } from "./simScheduler.ts";
export { type SimResult, Simulation, simulate } from "./simulation.ts";
export { SimWorker } from "./simWorker.ts";
export {
  ACTOR_COUNTS,
  type ActorCount,
  REPLICATE_COUNTS,
  type ReplicateCount,
  SCATTER_COUNTS,
  type ScatterCount,
  SimStats,
} from "./stats.ts";
export { computeValue, expectedValues, SimActorRef, SimValue } from "./values.ts";
export { VARIANTS, type Variant, variantHooks } from "./variants.ts";
export type { ValidateEvery } from "./wholeStateChecks.ts";
export type { SimTask, Workload } from "./workload.ts";
