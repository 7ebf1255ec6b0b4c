/**
 * Configuration of one simulated cluster run. Every field has a default;
 * {@link resolveSimOptions} fills them in and rejects nonsense.
 */

import { checkKnownOptions, type OptionNames } from "../util/knownOptions.ts";
import { showValue } from "../util/showValue.ts";
import { DEFAULT_FAULT_RATES, FAULT_KINDS, type FaultRates, faultRateProblem } from "./faults.ts";
import { isGivenWorkload, workloadProblem } from "./givenWorkload.ts";
import type { SimHooks } from "./hooks.ts";
import type { ValidateEvery } from "./wholeStateChecks.ts";
import type { Workload } from "./workload.ts";

/**
 * The graph workloads the simulator can generate (and `bench:sim` can size). `mix`
 * picks one of the others per seed (`pinned` and `configured` aside: they came later,
 * and adding them to the draw would change every `mix` seed). `configured` is Dask's
 * canonical root-ish case: many `load-i` tasks reading one small `config` task, the
 * only workload whose root-ish tasks wait in `queued` with an input.
 */
export const WORKLOAD_KINDS = [
  "random",
  "map",
  "tree",
  "shuffle",
  "chain",
  "mix",
  "pinned",
  "configured",
] as const;

/**
 * Every workload `weft sim` runs: the graph workloads and `scatter` (random DAGs
 * some of whose roots the client scatters to workers rather than submits; see
 * `scatter.ts`). `mix` does not draw `scatter` either. It is not among
 * {@link WORKLOAD_KINDS}, the list `bench:sim` offers (and its tests quote).
 */
export const SIM_WORKLOAD_KINDS = [...WORKLOAD_KINDS, "scatter"] as const;

/** One workload kind. */
export type WorkloadKind = (typeof SIM_WORKLOAD_KINDS)[number];

/** Options of a simulated run (all optional but `seed`). */
export interface SimOptions {
  /** The seed: the same seed and options give the same run, event for event. */
  seed: number;
  /** Workers at the start (≥ 1). Dead workers are replaced. Default 4. */
  workers?: number;
  /** Each worker gets 1 to this many threads. Default 2. */
  maxThreads?: number;
  /**
   * Which graph the client submits: a built-in kind, or a workload of the
   * program's own (`graphWorkload(graph)` reads a task graph as one). Default
   * `random`.
   */
  workload?: WorkloadKind | Workload;
  /**
   * Size of a built-in workload: tasks of a random DAG, tasks of `map`, leaves of
   * `tree`, partitions of `shuffle`, length of `chain`, loads of `configured`.
   * Default 40. A given workload has its own tasks: the run's options say how
   * many, and it may only say that number.
   */
  tasks?: number;
  /** Fault rates; 0 turns a fault off. Default: every fault at its default rate. */
  faults?: FaultRates;
  /**
   * Validate the machines: the tasks each stimulus changed after it, and each
   * machine's whole state as often as `validateEvery` says. Default true.
   */
  validate?: boolean;
  /**
   * With `validate`, check a machine's whole state after every this many of its
   * stimuli (an integer ≥ 1; 1 after each), or `"auto"`: after each in a run of a
   * workload of at most 2,000 tasks, in a bigger one every ⌈size / 10⌉, size the
   * machine's tasks and workers (a check costs as much as the machine is big).
   * Either way also at the end of each phase and before a failure of another kind
   * is reported. Default `"auto"`.
   */
  validateEvery?: ValidateEvery;
  /**
   * The scheduler runs a round of work stealing (the `balance` stimulus)
   * every 0.1 virtual seconds, as a real one does by default (the steal fault
   * asks for random steals regardless). Default true.
   */
  workStealing?: boolean;
  /**
   * Virtual seconds between rounds of work stealing (Dask's
   * `work-stealing-interval`), at least 0.001. Default 0.1, a real scheduler's
   * default; a shorter one steals while more is in flight.
   */
  workStealingInterval?: number;
  /**
   * The scheduler runs a round of the Active Memory Manager (the
   * `reduce-replicas` stimulus) every 2 virtual seconds, as a real one does
   * by default. Default true.
   */
  activeMemoryManager?: boolean;
  /**
   * Virtual seconds between rounds of the Active Memory Manager, at least
   * 0.001. Default 2, a real scheduler's default; a shorter one drops replicas
   * while more is in flight.
   */
  activeMemoryManagerInterval?: number;
  /**
   * After the client has every result, release them all and check that every
   * machine forgets everything. Default true.
   */
  releasePhase?: boolean;
  /**
   * A deliberately broken variant of the cluster to run (see `variants.ts`),
   * by name. Default none.
   */
  variant?: string;
  /** Interception hooks (for tests); used instead of the variant's. Default none. */
  hooks?: SimHooks;
  /** Concurrent outgoing transfers a worker serves before answering busy. Default 2. */
  outgoingLimit?: number;
  /** Concurrent incoming transfers per worker. Default 4. */
  incomingLimit?: number;
  /** Mean one-way message latency, virtual seconds. Default 0.002. */
  latency?: number;
  /** Link bandwidth, bytes per virtual second. Default 100 MB/s. */
  bandwidth?: number;
  /** Workers send a heartbeat this often. Default 0.5 s. */
  heartbeatInterval?: number;
  /** The scheduler removes a worker silent for this long. Default 2 s. */
  heartbeatTimeout?: number;
  /** Workers look for missing data this often. Default 1 s. */
  findMissingInterval?: number;
  /** A worker retries a busy peer after this long (Dask: 0.15 s). */
  retryBusyDelay?: number;
  /** A dead worker is replaced by a new one after this long. Default 1 s. */
  replaceDelay?: number;
  /** How many worker deaths while running a task make it erred (Dask's `allowed-failures`). Default 3. */
  allowedFailures?: number;
  /**
   * The share of runs with scattered data (the `scatter` workload, and `configured`
   * runs whose client scatters `config`) whose client also replicates (see `replicate.ts`;
   * decided per run from a random stream of its own, so that the runs that do not
   * replicate are those they were before). 0 to 1; default 0.5. Other workloads
   * ignore it, as they do the three shares below (`weft sim` refuses their flags
   * there; see `workloadOptions.ts`).
   */
  replicate?: number;
  /**
   * The share of those runs' `replicate` requests that ask for a single copy,
   * so that the scheduler drops the others (decided per request from a random
   * stream of its own). 0 to 1; default 1/3.
   */
  replicateOne?: number;
  /**
   * The share of those runs' requests that are `rebalance`s rather than
   * `replicate`s (decided per request from the stream that picks the requests
   * for one copy). 0 to 1; default 0.25.
   */
  rebalance?: number;
  /**
   * The share of the other requests that retire a worker the scheduler lists
   * instead (decided per request from the same stream). 0 to 1; default 0.1.
   */
  retire?: number;
  /**
   * The share of runs whose client fires and forgets one of its wanted keys
   * (`fire-and-forget`, then a release), at a random time early in the run
   * (decided from a random stream of its own, so that the other runs are those
   * they were before). 0 to 1; default 0.15.
   */
  fireAndForget?: number;
  /**
   * The share of runs whose client restarts the cluster once (`restart`), at a
   * random time early in the run, then submits its graph again: every task is
   * forgotten, every worker closes and a new one starts in its place after
   * `replaceDelay`, and the client must still get every answer (decided from
   * a random stream of its own). Not in runs with scattered data (the `scatter`
   * workload, `configured` with its config scattered), whose values a restart
   * loses for good (the `scatter` workload ignores it, and `restartWorker`: `weft sim`
   * refuses their flags with it). 0 to 1; default 0.05.
   */
  restart?: number;
  /**
   * The share of runs whose client restarts one worker (`restart-workers`), at
   * a random time early in the run: the scheduler removes it, its tasks run
   * elsewhere, what only it held is computed again, and another starts in its
   * place after `replaceDelay` (decided from a random stream of its own). Not
   * in runs with scattered data. 0 to 1; default 0.05.
   */
  restartWorker?: number;
  /**
   * The share of the workload's tasks that are actors (Dask's `actor=True`:
   * the result stays on the worker that ran it, peers get a handle to it, and
   * a wanted actor whose worker is lost errs). Each task is one with this
   * chance, drawn from a random stream of its own, so that the graph is the
   * same whatever the share, and a share of 0 draws nothing: the runs are
   * those they were before actors came. Scattered data is never one. 0 to 1;
   * default 0.1. A given workload's tasks are actors as it says (its share is 0).
   */
  actors?: number;
  /**
   * Virtual seconds without progress that count as a deadlock. Default 60, or ten
   * times the workload's longest task (1.5 times its duration, and its result sent
   * once) when that is longer.
   */
  stallTimeout?: number;
  /**
   * Give up (as a livelock) after this many events. Default 5,000,000, or 50 a task
   * of the workload when that is more.
   */
  maxEvents?: number;
  /**
   * Give up (as a livelock) after this many virtual seconds. Default 3,600, or three
   * times the workload's tasks run one after another (compute and the transfer of
   * each result) when that is longer.
   */
  maxTime?: number;
}

/** {@link SimOptions} with the defaults filled in. */
export type ResolvedSimOptions = Required<Omit<SimOptions, "hooks">> & { hooks: SimHooks | null };

/** The defaults of every option but `seed`. */
export const SIM_DEFAULTS: Omit<ResolvedSimOptions, "seed"> = {
  workers: 4,
  maxThreads: 2,
  workload: "random",
  tasks: 40,
  faults: DEFAULT_FAULT_RATES,
  validate: true,
  validateEvery: "auto",
  workStealing: true,
  workStealingInterval: 0.1,
  activeMemoryManager: true,
  activeMemoryManagerInterval: 2,
  releasePhase: true,
  variant: "",
  hooks: null,
  outgoingLimit: 2,
  incomingLimit: 4,
  latency: 0.002,
  bandwidth: 100_000_000,
  heartbeatInterval: 0.5,
  heartbeatTimeout: 2,
  findMissingInterval: 1,
  retryBusyDelay: 0.15,
  replaceDelay: 1,
  allowedFailures: 3,
  replicate: 0.5,
  replicateOne: 1 / 3,
  rebalance: 0.25,
  retire: 0.1,
  fireAndForget: 0.15,
  restart: 0.05,
  restartWorker: 0.05,
  actors: 0.1,
  stallTimeout: 60,
  maxEvents: 5_000_000,
  maxTime: 3_600,
};

/** The most tasks a simulated workload may build (a million-task run takes a few GB). */
export const MAX_SIM_TASKS = 4_000_000;

/**
 * The most workers a simulated cluster may start with: the run's cost grows as the
 * square of its workers (each registration looks at every worker, and so does each
 * validation), so that 10,000 take minutes validated, 100,000 hours, and 5,000,000
 * filled gigabytes before they had all registered.
 */
export const MAX_SIM_WORKERS = 10_000;

/** Every option name, so that a misspelt one is refused rather than its default run unsaid. */
const OPTION_NAMES: OptionNames<SimOptions> = {
  seed: true,
  workers: true,
  maxThreads: true,
  workload: true,
  tasks: true,
  faults: true,
  validate: true,
  validateEvery: true,
  workStealing: true,
  workStealingInterval: true,
  activeMemoryManager: true,
  activeMemoryManagerInterval: true,
  releasePhase: true,
  variant: true,
  hooks: true,
  outgoingLimit: true,
  incomingLimit: true,
  latency: true,
  bandwidth: true,
  heartbeatInterval: true,
  heartbeatTimeout: true,
  findMissingInterval: true,
  retryBusyDelay: true,
  replaceDelay: true,
  allowedFailures: true,
  replicate: true,
  replicateOne: true,
  rebalance: true,
  retire: true,
  fireAndForget: true,
  restart: true,
  restartWorker: true,
  actors: true,
  stallTimeout: true,
  maxEvents: true,
  maxTime: true,
};

/**
 * Throws a TypeError for an option of the wrong type that the range checks would
 * not catch: a truthy string for a switch ran it on (`workStealing: "false"`), and
 * `faults: null` or hooks that are no object failed later as a TypeError of the
 * simulator's own.
 */
function checkOptionTypes(o: SimOptions): void {
  // A number as text (from JSON or the environment) was refused as out of range:
  // "tasks must be an integer ≥ 1, got 5".
  for (const name of ["seed", ...Object.keys(SIM_DEFAULTS)] as (keyof SimOptions)[]) {
    const v = o[name];
    const numeric =
      name === "seed" || typeof SIM_DEFAULTS[name as keyof typeof SIM_DEFAULTS] === "number";
    if (numeric && v !== undefined && typeof v !== "number") {
      throw new TypeError(`${name} must be a number, got ${showValue(v)}`);
    }
  }
  for (const name of ["validate", "workStealing", "activeMemoryManager", "releasePhase"] as const) {
    const v = o[name];
    if (v !== undefined && typeof v !== "boolean") {
      throw new TypeError(`${name} must be a boolean, got ${showValue(v)}`);
    }
  }
  const every = o.validateEvery;
  if (every !== undefined && every !== "auto" && !(Number.isInteger(every) && every >= 1)) {
    throw new RangeError(
      `validateEvery must be an integer ≥ 1 (1: a machine's whole state after every stimulus) or "auto", got ${showValue(every)}`,
    );
  }
  const { faults, hooks } = o;
  if (faults !== undefined) {
    if (typeof faults !== "object" || faults === null || Array.isArray(faults)) {
      throw new TypeError(
        `faults must be an object of rates by fault (parseFaults(spec) makes one), got ${showValue(faults)}`,
      );
    }
    // A misspelt fault was dropped, and the rate meant for it not applied.
    checkKnownOptions(
      "faults",
      faults,
      Object.fromEntries(FAULT_KINDS.map((k) => [k, true])) as Record<string, true>,
    );
    for (const kind of FAULT_KINDS) {
      const rate: unknown = faults[kind];
      if (rate !== undefined && typeof rate !== "number") {
        throw new TypeError(`faults.${kind} must be a number, got ${showValue(rate)}`);
      }
    }
  }
  // null is what a result's options hold: passed back, it means none.
  if (
    hooks !== undefined &&
    hooks !== null &&
    (typeof hooks !== "object" || Array.isArray(hooks))
  ) {
    throw new TypeError(`hooks must be an object of hook functions, got ${showValue(hooks)}`);
  }
}

/** About how many tasks the workload `kind` of size `n` builds (`shuffle`: n², the others ≤ 2n). */
function builtTasks(kind: string, n: number): number {
  return kind === "shuffle" ? n * n + 2 * n : 2 * n;
}

/**
 * Fill in defaults; throws RangeError naming a bad option, or TypeError for an
 * unknown option or one of the wrong type.
 */
export function resolveSimOptions(o: SimOptions): ResolvedSimOptions {
  // Else "Cannot convert undefined or null to object", naming nothing.
  if (typeof o !== "object" || o === null || Array.isArray(o)) {
    throw new TypeError(`simulate: the options must be an object with a seed, got ${showValue(o)}`);
  }
  checkKnownOptions("simulate", o, OPTION_NAMES);
  checkOptionTypes(o);
  let r: ResolvedSimOptions = { ...SIM_DEFAULTS, ...stripUndefined(o), hooks: o.hooks ?? null };
  if (!Number.isSafeInteger(r.seed) || r.seed < 0) {
    throw new RangeError(`seed must be an integer ≥ 0, got ${r.seed}`);
  }
  for (const name of [
    "workers",
    "maxThreads",
    "tasks",
    "outgoingLimit",
    "incomingLimit",
  ] as const) {
    if (!Number.isInteger(r[name]) || r[name] < 1) {
      throw new RangeError(`${name} must be an integer ≥ 1, got ${r[name]}`);
    }
  }
  if (r.workers > MAX_SIM_WORKERS) {
    throw new RangeError(
      `workers must be at most ${MAX_SIM_WORKERS}, got ${r.workers} (a run's cost grows as the square of its workers: ${MAX_SIM_WORKERS} take minutes)`,
    );
  }
  const given = isGivenWorkload(r.workload);
  if (given) r = resolveGivenWorkload(o, r);
  const built = given ? r.tasks : builtTasks(r.workload as WorkloadKind, r.tasks);
  if (built > MAX_SIM_TASKS) {
    throw new RangeError(
      `tasks: a ${r.workload} workload of ${r.tasks} builds about ${built} tasks; at most ${MAX_SIM_TASKS} (each lives in the simulated scheduler, a worker and the client: more runs out of memory)`,
    );
  }
  // A NaN or negative maxEvents disabled or misplaced the livelock guard unnoticed.
  if (!Number.isSafeInteger(r.maxEvents) || r.maxEvents < 1) {
    throw new RangeError(`maxEvents must be an integer ≥ 1, got ${r.maxEvents}`);
  }
  if (!given && !(SIM_WORKLOAD_KINDS as readonly string[]).includes(r.workload as string)) {
    throw new RangeError(
      `workload must be one of ${SIM_WORKLOAD_KINDS.join(", ")}, got ${String(r.workload)}`,
    );
  }
  for (const name of [
    "latency",
    "bandwidth",
    "heartbeatInterval",
    "heartbeatTimeout",
    "findMissingInterval",
    "retryBusyDelay",
    "replaceDelay",
    "workStealingInterval",
    "activeMemoryManagerInterval",
    "stallTimeout",
    "maxTime",
  ] as const) {
    if (!(r[name] > 0) || !Number.isFinite(r[name])) {
      throw new RangeError(`${name} must be a finite number > 0, got ${r[name]}`);
    }
  }
  // A real scheduler's rounds are at least a millisecond apart (its intervals are whole
  // ms): shorter ones filled the run's events with rounds, reported as a livelock.
  for (const name of ["workStealingInterval", "activeMemoryManagerInterval"] as const) {
    if (r[name] < 0.001) {
      throw new RangeError(
        `${name} must be at least 0.001 (a millisecond, a real scheduler's least), got ${r[name]}`,
      );
    }
  }
  for (const name of [
    "replicate",
    "replicateOne",
    "rebalance",
    "retire",
    "fireAndForget",
    "restart",
    "restartWorker",
    "actors",
  ] as const) {
    if (!(r[name] >= 0 && r[name] <= 1)) {
      throw new RangeError(`${name} must be a number from 0 to 1, got ${r[name]}`);
    }
  }
  for (const kind of FAULT_KINDS) {
    const problem = faultRateProblem(kind, r.faults[kind]);
    if (problem !== null) throw new RangeError(`faults.${kind}: ${problem}, got ${r.faults[kind]}`);
  }
  return checkTimings(r);
}

/**
 * `r` for a workload the program gave (`o.workload`), checked: `tasks` may only
 * repeat its number of tasks and `actors` only 0, as a run's options do (passed
 * back, they run it again), since neither could change it.
 */
function resolveGivenWorkload(o: SimOptions, r: ResolvedSimOptions): ResolvedSimOptions {
  const w = r.workload as Workload;
  const problem = workloadProblem(w, MAX_SIM_TASKS);
  if (problem !== null) throw new RangeError(`workload ${problem}`);
  if (o.tasks !== undefined && o.tasks !== w.tasks.length) {
    throw new RangeError(
      `tasks sizes the built-in workloads; the given workload has ${w.tasks.length} tasks of its own (leave tasks out)`,
    );
  }
  if (o.actors !== undefined && o.actors !== 0) {
    throw new RangeError(
      "actors makes a share of a built-in workload's tasks actors; a given workload's tasks are actors as it says (set actor on its tasks, leave actors out)",
    );
  }
  return { ...r, tasks: w.tasks.length, actors: 0 };
}

/** `r`, once its timing options (latency against the timeouts) are checked. */
function checkTimings(r: ResolvedSimOptions): ResolvedSimOptions {
  if (r.heartbeatTimeout <= r.heartbeatInterval) {
    throw new RangeError("heartbeatTimeout must exceed heartbeatInterval");
  }
  // Slower links than these make every run look broken: heartbeats arrive after the
  // scheduler gave up on their worker, or news after the no-progress window closed.
  if (r.latency * 2 > r.heartbeatTimeout) {
    throw new RangeError(
      `latency must be at most half of heartbeatTimeout (${r.heartbeatTimeout} s), got ${r.latency}: heartbeats that late make the scheduler remove every worker`,
    );
  }
  if (r.latency * 30 > r.stallTimeout) {
    throw new RangeError(
      `latency must be at most stallTimeout / 30 (${r.stallTimeout / 30} s), got ${r.latency}: the no-progress window would close on messages still in flight`,
    );
  }
  return r;
}

function stripUndefined(o: SimOptions): SimOptions {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as unknown as SimOptions;
}
