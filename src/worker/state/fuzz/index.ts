/**
 * A reusable, deterministic fuzz driver for the worker state machine: a fake scheduler,
 * fake peers and a fake worker shell that feed random valid stimuli into a WorkerState
 * and only complete the instructions it gave. Used by the property test; reusable by
 * benchmarks and the cluster simulator (pure: everything comes from the seed).
 */
export {
  describeStimulus,
  FuzzDriver,
  FuzzFailure,
  type FuzzOptions,
  type FuzzResult,
  type FuzzWorkerConfig,
  randomWorkerConfig,
  runFuzz,
} from "./driver.ts";
export {
  FakeCluster,
  type KeySpec,
  type OutstandingExecute,
  type OutstandingGather,
} from "./fakeCluster.ts";
export { Rng } from "./rng.ts";
export {
  type ActionKind,
  DEFAULT_WEIGHTS,
  StimulusGenerator,
  type StimulusGeneratorOptions,
} from "./stimulusGenerator.ts";
