import type { DataStore } from "../dataStore.ts";
import { TaskError } from "../errorMessage.ts";
import {
  ComputeTaskEvent,
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  FindMissingEvent,
  FreeKeysEvent,
  GatherDepSuccessEvent,
  RefreshWhoHasEvent,
  RetryBusyWorkerEvent,
  type StateMachineEvent,
  UnpauseEvent,
} from "../events.ts";
import type { Instruction } from "../instructions.ts";
import { type LogEntry, LoggedRecs } from "../log.ts";
import { PROCESSING, TASK_STATES, type TaskState, type TaskStateState } from "../taskState.ts";
import { WorkerState } from "../workerState.ts";
import { FakeCluster, hasWaiter } from "./fakeCluster.ts";
import { Rng } from "./rng.ts";
import { stimulusCombinations } from "./stimulusCoverage.ts";
import { type ActionKind, StimulusGenerator } from "./stimulusGenerator.ts";

/** The worker settings of one fuzz run, drawn from its seed. */
export interface FuzzWorkerConfig {
  nthreads: number;
  resources: Record<string, number>;
  transferIncomingCountLimit: number;
  transferIncomingBytesLimit: number;
  transferMessageBytesLimit: number;
  transferIncomingBytesThrottleThreshold: number;
  /**
   * Probability that storing a value fails (a spilling store that cannot serialise it),
   * which errs the task. Never for a task another one waits for (dask#6705), nor for a
   * resumed task (a seed bug).
   */
  storeFailureRate: number;
}

export interface FuzzOptions {
  /** Seed of everything random in the run. */
  seed: number;
  /** Number of random stimuli, before draining. */
  steps: number;
  /** Run `validateState()` (and the shell-consistency checks) every this many stimuli; 0: never. Default 1. */
  validateEvery?: number;
  /** Drain at the end and check that everything the scheduler wants completed. Default true. */
  checkLiveness?: boolean;
  /** Overrides of the action weights. */
  weights?: Partial<Record<ActionKind, number>>;
  /** Size of the task graph. Default 40. */
  maxKeys?: number;
  /** Overrides of the worker settings drawn from the seed. */
  config?: Partial<FuzzWorkerConfig>;
  /** Called after every stimulus (e.g. by a benchmark or a simulator). */
  onStimulus?: (ev: StateMachineEvent, instructions: readonly Instruction[]) => void;
}

export interface FuzzResult {
  seed: number;
  config: FuzzWorkerConfig;
  /** Random stimuli handled. */
  steps: number;
  /** Stimuli handled while draining. */
  drainStimuli: number;
  /** Stimuli handled per event class (random and drain). */
  events: Record<string, number>;
  /**
   * Stimuli by class and the state of the task(s) they concern when they came
   * (`ComputeTaskEvent @ waiting`, `FreeKeysEvent.key @ cancelled(flight->null)`...:
   * see stimulusCombinations).
   */
  eventsAt: Record<string, number>;
  /** Instructions given per class. */
  instructions: Record<string, number>;
  /** Candidate keys or actions a validity rule turned down, by rule. */
  skipped: Record<string, number>;
  /** Random stimuli made, by action of the generator. */
  actions: Partial<Record<ActionKind, number>>;
  /** Occurrences of tolerated seed bugs. */
  knownSeedBugs: Record<string, number>;
  /** task-finished messages carrying an older run_id than the scheduler's latest. */
  staleRunIds: number;
  /** `start->finish` counts of the transitions in the worker's log. */
  transitions: Record<string, number>;
  /** Number of keys in the task graph. */
  keys: number;
  /** Task states at the end. */
  finalStates: Partial<Record<TaskStateState, number>>;
}

/** A failed fuzz run, with what it takes to replay it. */
export class FuzzFailure extends Error {
  override name = "FuzzFailure";
  constructor(
    readonly seed: number,
    readonly step: number,
    readonly phase: "random" | "drain",
    readonly trace: readonly string[],
    cause: unknown,
  ) {
    const msg = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(
      `worker-state fuzz failure: seed=${seed} phase=${phase} step=${step}\n` +
        `replay: runFuzz({ seed: ${seed}, steps: ${phase === "random" ? step : "<steps>"} })\n` +
        `cause: ${truncate(msg, 4000)}\n` +
        `last stimuli (oldest first):\n  ${trace.join("\n  ")}`,
      { cause },
    );
  }
}

/** Draw the worker settings of a run. */
export function randomWorkerConfig(rng: Rng): FuzzWorkerConfig {
  return {
    nthreads: rng.pick([1, 1, 2, 3, 4]),
    resources: rng.chance(0.5) ? { R: rng.pick([1, 2, 3]) } : {},
    transferIncomingCountLimit: rng.pick([1, 2, 4, 9999]),
    transferIncomingBytesLimit: rng.pick([Number.POSITIVE_INFINITY, 100_000_000, 5_000]),
    transferMessageBytesLimit: rng.pick([Number.POSITIVE_INFINITY, 50_000_000, 1_000]),
    transferIncomingBytesThrottleThreshold: rng.pick([10_000_000, 1]),
    storeFailureRate: rng.pick([0, 0, 0.03]),
  };
}

const QUIESCENT: ReadonlySet<TaskStateState> = new Set(["memory", "error", "released"]);
const TRACE_LENGTH = 40;

/**
 * Drives random valid stimuli into one WorkerState, with a fake scheduler, fake peers
 * and a fake worker shell that only complete the instructions the worker gave.
 * Deterministic: the same options give the same run.
 */
export class FuzzDriver {
  readonly rng: Rng;
  readonly ws: WorkerState;
  readonly cluster: FakeCluster;
  readonly generator: StimulusGenerator;
  readonly config: FuzzWorkerConfig;
  readonly events: Record<string, number> = {};
  readonly eventsAt: Record<string, number> = {};
  /** Occurrences of seed bugs the port reproduces faithfully and the driver tolerates. */
  readonly knownSeedBugs: Record<string, number> = {};
  /** Keys the scheduler wanted that the seed bug of {@link detectDroppedResumed} dropped. */
  private readonly droppedBySeedBug = new Set<string>();
  /** Keys the fake scheduler released while draining because a dependency erred. */
  private readonly erredByDependency = new Set<string>();
  /** Stimuli handled so far (random and drain). */
  stimuli = 0;
  private readonly validateEvery: number;
  private readonly trace: string[] = [];
  private readonly onStimulus: FuzzOptions["onStimulus"];

  constructor(readonly options: FuzzOptions) {
    this.rng = new Rng(options.seed);
    this.config = { ...randomWorkerConfig(this.rng), ...options.config };
    this.cluster = new FakeCluster();
    const storeRng = new Rng(options.seed ^ 0x2545f491);
    const rate = this.config.storeFailureRate;
    const store = new FlakyStore((key) => {
      if (rate <= 0) return false;
      const ts = this.ws.tasks.get(key);
      // Not for a resumed task: a seed bug, faithfully ported, makes that an
      // AssertionError (_transition_resumed_memory clears previous/next before the store
      // fails, then _transition_resumed_error asserts previous == "flight"). Reproduced
      // on the seed with a store that always fails: AcquireReplicas(x); ComputeTask(x);
      // GatherDepSuccess(x).
      if (ts === undefined || ts.state === "resumed" || hasWaiter(ts)) return false;
      return storeRng.chance(rate);
    });
    this.ws = new WorkerState({
      data: store,
      address: this.cluster.address,
      nthreads: this.config.nthreads,
      resources: this.config.resources,
      transferIncomingCountLimit: this.config.transferIncomingCountLimit,
      transferIncomingBytesLimit: this.config.transferIncomingBytesLimit,
      transferMessageBytesLimit: this.config.transferMessageBytesLimit,
      validate: true,
      // The default tie-break source, Python's random.Random(0) as in the seed, keeps
      // a run replayable against the seed.
    });
    this.ws.transferIncomingBytesThrottleThreshold =
      this.config.transferIncomingBytesThrottleThreshold;
    this.generator = new StimulusGenerator(this.ws, this.cluster, this.rng, {
      weights: options.weights,
      maxKeys: options.maxKeys,
    });
    this.validateEvery = options.validateEvery ?? 1;
    this.onStimulus = options.onStimulus;
  }

  /** Feed one stimulus to the worker and record the instructions it gives. */
  handle(ev: StateMachineEvent): Instruction[] {
    this.trace.push(describeStimulus(ev));
    if (this.trace.length > TRACE_LENGTH) this.trace.shift();
    const resumed = this.resumedToWaiting();
    for (const at of stimulusCombinations(this.ws, ev)) {
      this.eventsAt[at] = (this.eventsAt[at] ?? 0) + 1;
    }
    this.cluster.noteStimulus(this.ws, ev);
    const instructions = this.ws.handleStimulus(ev);
    this.checkAnswers(ev, instructions);
    this.cluster.observe(this.ws, instructions);
    const records = this.recordsOf(ev.stimulusId);
    this.detectDroppedResumed(resumed, records);
    this.detectComputeTurnedFetch(records);
    this.events[ev.cls] = (this.events[ev.cls] ?? 0) + 1;
    this.stimuli++;
    if (this.validateEvery > 0 && this.stimuli % this.validateEvery === 0) this.validate();
    this.onStimulus?.(ev, instructions);
    return instructions;
  }

  /**
   * A seed quirk, faithfully ported, met once compute-task may target a task others
   * wait for (StimulusGenerator.computeForWaiters): a dependent going released ->
   * waiting recommends `fetch` for each dependency not in memory, the task the
   * scheduler asked this worker to compute too.
   *
   * - Running, it becomes resumed(executing->fetch): the worker now means to fetch it,
   *   but its execution still ends in task-finished, so the fake scheduler tolerates
   *   whatever the worker does with it (FakeCluster.takenOver).
   * - Not running yet (waiting, ready, constrained), it goes through released to
   *   fetch, or to missing as it knows no holder: the worker forgets the compute
   *   request without a word, as the seed does (checked with tools/oracle on fuzz seed
   *   1282512645, 98 steps), and the fake scheduler gives up on it, as for
   *   {@link detectDroppedResumed}.
   */
  private detectComputeTurnedFetch(records: readonly LogEntry[]): void {
    const c = this.cluster;
    for (const k of c.assigned.keys()) {
      const ts = this.ws.tasks.get(k);
      // Only when the quirk's cause is in this stimulus's records: a port that drops a
      // compute request any other way is left to checkConsistency() to report.
      if (ts === undefined || !recommendedByDependent(ts, "fetch", records)) continue;
      if (ts.state === "resumed" && ts.next === "fetch") {
        c.assigned.delete(k);
        c.takenOver.add(k);
        this.knownSeedBugs.computeTurnedFetch = (this.knownSeedBugs.computeTurnedFetch ?? 0) + 1;
      } else if (ts.state === "fetch" || ts.state === "flight" || ts.state === "missing") {
        c.assigned.delete(k);
        this.droppedBySeedBug.add(k);
        this.knownSeedBugs.computeDroppedForFetch =
          (this.knownSeedBugs.computeDroppedForFetch ?? 0) + 1;
      }
    }
  }

  /** Tasks the scheduler asked this worker to compute while they were in flight. */
  private resumedToWaiting(): TaskState[] {
    const out: TaskState[] = [];
    for (const k of this.cluster.assigned.keys()) {
      const ts = this.ws.tasks.get(k);
      if (ts !== undefined && ts.state === "resumed" && ts.next === "waiting") out.push(ts);
    }
    return out;
  }

  /**
   * A seed bug, faithfully ported (see "releasing a dependent cancels a task computed
   * while in flight, silently" in property.test.ts): releasing a task
   * (free-keys, remove-replicas, the end of a cancelled execution or transfer...)
   * recommends `released` for each of its dependencies that has no waiter and is not in
   * memory, ready or processing; a dependency in resumed(flight->waiting) is none of
   * these, so it is cancelled although the scheduler asked this worker to compute it,
   * and it is then forgotten without telling the scheduler, which waits forever.
   * Detected precisely (the task was resumed(flight->waiting) and expected by the
   * scheduler before the stimulus, and is cancelled(flight), or back in flight (below),
   * after it although the scheduler did not release it) and counted; the fake
   * scheduler then gives up on it.
   */
  private detectDroppedResumed(before: readonly TaskState[], records: readonly LogEntry[]): void {
    for (const ts of before) {
      if (!this.cluster.assigned.has(ts.key)) continue;
      const same = this.ws.tasks.get(ts.key) === ts;
      if (same && (PROCESSING.has(ts.state) || (ts.state === "resumed" && ts.next === "waiting"))) {
        continue;
      }
      if (
        same &&
        ts.state === "cancelled" &&
        ts.previous === "flight" &&
        recommendedByDependent(ts, "released", records)
      ) {
        this.cluster.assigned.delete(ts.key);
        this.droppedBySeedBug.add(ts.key);
        this.knownSeedBugs.droppedResumedTask = (this.knownSeedBugs.droppedResumedTask ?? 0) + 1;
      } else if (same && ts.state === "flight" && recommendedByDependent(ts, "fetch", records)) {
        // The other half of the same bug: a dependent going released -> waiting
        // recommends `fetch` for its dependencies not in memory, and resumed -> fetch
        // turns a task resumed(flight->waiting) back into flight, forgetting the
        // compute request (seen once compute-task may target a task others wait for:
        // see StimulusGenerator.computeForWaiters).
        this.cluster.assigned.delete(ts.key);
        this.droppedBySeedBug.add(ts.key);
        this.knownSeedBugs.resumedBackToFlight = (this.knownSeedBugs.resumedBackToFlight ?? 0) + 1;
      }
      // Anything else is left to checkConsistency() to report.
    }
  }

  /** The transition log's records of the stimulus just handled (each ends with its id, then the time). */
  private recordsOf(stimulusId: string): LogEntry[] {
    const log = this.ws.log;
    const out: LogEntry[] = [];
    for (let i = log.length - 1; i >= 0; i--) {
      const record = log.at(i) as LogEntry;
      if (record[record.length - 2] !== stimulusId) break;
      out.push(record);
    }
    return out.reverse();
  }

  /**
   * What the worker tells the scheduler about the task a stimulus names carries
   * that stimulus's run ID, as the seed's handlers pass `ev.run_id` on (a run's
   * result answers the compute-task that started it, not a later one); and a
   * value the worker took in is the one given.
   */
  private checkAnswers(ev: StateMachineEvent, instructions: readonly Instruction[]): void {
    if (
      ev instanceof ExecuteSuccessEvent ||
      ev instanceof ExecuteFailureEvent ||
      ev instanceof ComputeTaskEvent
    ) {
      for (const inst of instructions) {
        if (
          (inst.cls === "TaskFinishedMsg" || inst.cls === "TaskErredMsg") &&
          inst.key === ev.key &&
          inst.runId !== ev.runId
        ) {
          throw new Error(`${inst.cls}(${ev.key}) has run ID ${inst.runId}; ${ev.cls} ${ev.runId}`);
        }
      }
    }
    const given =
      ev instanceof ExecuteSuccessEvent
        ? new Map([[ev.key, ev.value]])
        : ev instanceof GatherDepSuccessEvent
          ? ev.data
          : null;
    for (const [key, value] of given ?? []) {
      const ts = this.ws.tasks.get(key);
      // An actor's object is kept among the actors, as in the seed.
      const kept = this.ws.actors.has(key) ? this.ws.actors.get(key) : this.ws.data.get(key);
      if (ts?.state === "memory" && kept !== value) {
        throw new Error(`${key} is in memory with a value other than the one ${ev.cls} gave`);
      }
    }
  }

  /** The full consistency checks. */
  validate(): void {
    // A task waiting for one in error (StimulusGenerator.failWaitedFor) is a state the
    // seed's validate_state rejects too: only those erred tasks are let be.
    const erredWaitedFor = new Set<TaskState>();
    for (const ts of this.waitersOfErred()) {
      for (const d of ts.waitingForData) if (d.state === "error") erredWaitedFor.add(d);
    }
    this.ws.validateState({ tolerateErredInput: (ts) => erredWaitedFor.has(ts) });
    this.cluster.checkConsistency(this.ws);
  }

  /** Tasks waiting for a dependency in error (dask/distributed#6705). */
  private waitersOfErred(): TaskState[] {
    const out: TaskState[] = [];
    for (const ts of this.ws.waiting) {
      for (const d of ts.waitingForData) {
        if (d.state === "error") {
          out.push(ts);
          break;
        }
      }
    }
    return out;
  }

  /**
   * What the scheduler does about tasks whose dependency erred: errs them and their
   * dependents, and releases them here. Returns false, handling nothing, if there are none.
   */
  private releaseWaitersOfErred(stimulusId: string): boolean {
    const waiters = this.waitersOfErred();
    if (waiters.length === 0) return false;
    const keys = new Set<string>();
    const add = (ts: TaskState) => {
      if (keys.has(ts.key)) return;
      keys.add(ts.key);
      for (const d of ts.dependents) if (this.cluster.isActive(d)) add(d);
    };
    for (const ts of waiters) add(ts);
    for (const k of keys) this.erredByDependency.add(k);
    this.handle(new FreeKeysEvent({ keys: [...keys], stimulusId }));
    return true;
  }

  /** One random stimulus. */
  step(): StateMachineEvent {
    const ev = this.generator.next();
    this.handle(ev);
    return ev;
  }

  /**
   * Let everything complete: unpause, answer busy retries, complete every Execute with
   * success and every GatherDep with all the keys asked for, answer refresh-who-has with
   * the truth, and ask for missing keys (once, until something else happens). With
   * `recompute`, the scheduler also recomputes elsewhere the keys no live peer holds
   * before answering. Returns the number of stimuli handled.
   */
  settle(recompute: boolean, maxStimuli = 20_000): number {
    const { cluster: c, ws } = this;
    const start = this.stimuli;
    const id = () => `drain-${this.stimuli - start}`;
    let askedMissing = false;
    for (;;) {
      if (this.stimuli - start > maxStimuli) throw new Error("drain did not converge");
      if (!ws.running) {
        this.handle(new UnpauseEvent({ stimulusId: id() }));
      } else if (c.retries.length > 0) {
        this.handle(new RetryBusyWorkerEvent({ worker: c.retries[0], stimulusId: id() }));
      } else if (c.executes.size > 0) {
        const [key, ex] = c.executes.entries().next().value as [string, { runId: number }];
        this.handle(
          new ExecuteSuccessEvent({
            key,
            runId: ex.runId,
            value: `${key}@${ex.runId}`,
            start: 1,
            stop: 2,
            nbytes: c.graph.get(key)?.nbytes ?? 1,
            type: "str",
            stimulusId: id(),
          }),
        );
      } else if (c.gathers.size > 0) {
        const [worker, g] = c.gathers.entries().next().value as [
          string,
          { keys: string[]; totalNbytes: number },
        ];
        const data = new Map(g.keys.map((k) => [k, `${k} from ${worker}`]));
        this.handle(
          new GatherDepSuccessEvent({
            worker,
            totalNbytes: g.totalNbytes,
            data,
            stimulusId: id(),
          }),
        );
      } else if (this.releaseWaitersOfErred(id())) {
        // The scheduler erred the tasks whose dependency erred and released them here.
      } else if (c.refreshRequests.length > 0) {
        const keys = c.refreshRequests.shift() as string[];
        if (recompute) {
          for (const k of keys) {
            const ts = ws.tasks.get(k);
            if (ts !== undefined && ts.state === "missing" && !c.assigned.has(k)) {
              c.materialize(this.rng, k);
            }
          }
        }
        this.handle(new RefreshWhoHasEvent({ whoHas: c.truthWhoHas(keys), stimulusId: id() }));
        continue;
      } else if (ws.missingDepFlight.size > 0 && !askedMissing) {
        askedMissing = true;
        this.handle(new FindMissingEvent({ stimulusId: id() }));
        if (c.refreshRequests.length === 0) throw new Error("find-missing asked for nothing");
        continue;
      } else {
        break;
      }
      askedMissing = false;
    }
    return this.stimuli - start;
  }

  /**
   * The liveness checks, in two phases.
   *
   * 1. Settle without new data: afterwards nothing is outstanding and nothing runs or
   *    transfers; the only tasks not in memory, error or released are those in missing,
   *    which no live peer holds (their holders died or dropped them), and those waiting
   *    for them; every task the scheduler wants is done (memory or error) or waits so.
   * 2. The scheduler recomputes the lost keys on live peers; settle again: see
   *    {@link checkQuiescent}.
   *
   * Returns the number of stimuli handled.
   */
  drain(): number {
    const c = this.cluster;
    const wanted = new Set(c.assigned.keys());
    let n = this.settle(false);
    this.checkSettled(wanted);
    n += this.settle(true);
    this.checkQuiescent(wanted);
    return n;
  }

  /** Phase 1 of {@link drain}. */
  checkSettled(wanted: ReadonlySet<string>): void {
    const { cluster: c, ws } = this;
    const fail = (msg: string) => {
      throw new Error(`not settled: ${msg}`);
    };
    this.checkIdle(fail);
    for (const ts of ws.tasks.values()) {
      if (ts.state === "missing") {
        if (c.liveReplicas(ts.key).size > 0) fail(`${ts} although a live peer holds it`);
      } else if (ts.state === "waiting") {
        if (ts.waitingForData.size === 0) fail(`${ts} waits for nothing`);
        for (const d of ts.waitingForData) {
          if (d.state !== "missing" && d.state !== "waiting") fail(`${ts} waits for ${d}`);
        }
      } else if (!QUIESCENT.has(ts.state)) {
        fail(`${ts} is stuck`);
      }
    }
    for (const k of wanted) {
      const ts = ws.tasks.get(k);
      if (ts === undefined || !c.assigned.has(k)) continue;
      if (ts.state !== "waiting")
        fail(`wanted task ${ts} is neither done nor waiting for lost data`);
    }
  }

  /**
   * Phase 2 of {@link drain}: nothing is outstanding, no task is anywhere but in memory,
   * error or released (kept as the dependency of another task), and every task the
   * scheduler wanted from this worker is in memory or error.
   */
  checkQuiescent(wanted: ReadonlySet<string>): void {
    const { cluster: c, ws } = this;
    const fail = (msg: string) => {
      throw new Error(`not quiescent after drain: ${msg}`);
    };
    this.checkIdle(fail);
    if (ws.missingDepFlight.size > 0) fail(`missingDepFlight = ${ws.missingDepFlight.size}`);
    if (ws.waiting.size > 0) fail(`waiting = ${ws.waiting.size}`);
    for (const ts of ws.tasks.values()) {
      if (!QUIESCENT.has(ts.state)) fail(`${ts} is stuck`);
      if (ts.state === "released" && ts.dependents.size === 0) {
        fail(`${ts} has no dependents and was not forgotten`);
      }
    }
    if (c.assigned.size > 0) fail(`the scheduler still expects [${[...c.assigned.keys()]}]`);
    for (const k of wanted) {
      // Dropped during the drain by the faithfully ported seed bug (counted, not a port bug).
      if (this.droppedBySeedBug.has(k) || this.erredByDependency.has(k)) continue;
      const ts = ws.tasks.get(k);
      if (ts === undefined || (ts.state !== "memory" && ts.state !== "error")) {
        fail(`wanted task ${k} ended as ${ts ?? "forgotten"}`);
      }
    }
  }

  /** Nothing outstanding, running, transferring, queued or busy; all resources free. */
  private checkIdle(fail: (msg: string) => never): void {
    const { cluster: c, ws } = this;
    if (c.executes.size + c.gathers.size + c.retries.length + c.refreshRequests.length > 0) {
      fail("instructions still outstanding");
    }
    const sizes: Record<string, number> = {
      executing: ws.executing.size,
      longRunning: ws.longRunning.size,
      inFlightTasks: ws.inFlightTasks.size,
      inFlightWorkers: ws.inFlightWorkers.size,
      ready: ws.ready.size,
      constrained: ws.constrained.size,
      busyWorkers: ws.busyWorkers.size,
      fetchCount: ws.fetchCount,
      transferIncomingBytes: ws.transferIncomingBytes,
    };
    for (const [name, n] of Object.entries(sizes)) if (n !== 0) fail(`${name} = ${n}`);
    for (const [r, total] of ws.totalResources) {
      if (Math.abs((ws.availableResources.get(r) ?? Number.NaN) - total) > 1e-9) {
        fail(`resource ${r} not all available`);
      }
    }
  }

  /** A summary of the run so far. */
  result(steps: number, drainStimuli: number): FuzzResult {
    const transitions: Record<string, number> = {};
    for (const e of this.ws.log) {
      if (e.length === 7 && isState(e[1]) && isState(e[2])) {
        const k = `${e[1]}->${e[2]}`;
        transitions[k] = (transitions[k] ?? 0) + 1;
      }
    }
    const finalStates: Partial<Record<TaskStateState, number>> = {};
    for (const ts of this.ws.tasks.values()) {
      finalStates[ts.state] = (finalStates[ts.state] ?? 0) + 1;
    }
    return {
      seed: this.options.seed,
      config: this.config,
      steps,
      drainStimuli,
      events: { ...this.events },
      eventsAt: { ...this.eventsAt },
      instructions: { ...this.cluster.instructionCounts },
      skipped: { ...this.generator.skipped },
      actions: { ...this.generator.made },
      knownSeedBugs: { ...this.knownSeedBugs },
      staleRunIds: this.cluster.staleRunIds,
      transitions,
      keys: this.cluster.keys.length,
      finalStates,
    };
  }

  /** The most recent stimuli, oldest first. */
  recentStimuli(): string[] {
    return [...this.trace];
  }
}

/** Run one fuzz run; throws a {@link FuzzFailure} on the first broken check. */
export function runFuzz(options: FuzzOptions): FuzzResult {
  const d = new FuzzDriver(options);
  let step = 0;
  try {
    for (step = 1; step <= options.steps; step++) d.step();
  } catch (err) {
    throw new FuzzFailure(options.seed, step, "random", d.recentStimuli(), err);
  }
  if (options.checkLiveness === false) return d.result(options.steps, 0);
  let drained: number;
  try {
    drained = d.drain();
    d.validate();
  } catch (err) {
    throw new FuzzFailure(options.seed, d.stimuli, "drain", d.recentStimuli(), err);
  }
  return d.result(options.steps, drained);
}

/** A Map that sometimes refuses a value, like a spilling store that cannot pickle it. */
class FlakyStore implements DataStore {
  private readonly map = new Map<string, unknown>();
  constructor(private readonly shouldFail: (key: string) => boolean) {}
  has(key: string): boolean {
    return this.map.has(key);
  }
  get(key: string): unknown {
    return this.map.get(key);
  }
  set(key: string, value: unknown): this {
    if (this.shouldFail(key)) throw new TaskError("TypeError: Could not serialize object", "");
    this.map.set(key, value);
    return this;
  }
  delete(key: string): boolean {
    return this.map.delete(key);
  }
  keys(): IterableIterator<string> {
    return this.map.keys();
  }
  get size(): number {
    return this.map.size;
  }
}

function isState(x: unknown): x is TaskStateState {
  return typeof x === "string" && (TASK_STATES as readonly string[]).includes(x);
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}...` : s;
}

/** A one-line description of a stimulus, for failure traces. */
export function describeStimulus(ev: StateMachineEvent): string {
  const parts: string[] = [];
  switch (ev.cls) {
    case "ComputeTaskEvent":
      parts.push(
        `key=${ev.key} run=${ev.runId} prio=${JSON.stringify(ev.priority)}`,
        `who_has=${JSON.stringify(Object.fromEntries(ev.whoHas))}`,
      );
      if (ev.resourceRestrictions.size > 0) {
        parts.push(`res=${JSON.stringify(Object.fromEntries(ev.resourceRestrictions))}`);
      }
      if (ev.actor) parts.push("actor");
      break;
    case "AcquireReplicasEvent":
    case "RefreshWhoHasEvent":
      parts.push(`who_has=${JSON.stringify(Object.fromEntries(ev.whoHas))}`);
      break;
    case "FreeKeysEvent":
    case "RemoveReplicasEvent":
      parts.push(`keys=${JSON.stringify(ev.keys)}`);
      break;
    case "GatherDepSuccessEvent":
      parts.push(`worker=${ev.worker} data=${JSON.stringify([...ev.data.keys()])}`);
      break;
    case "UpdateDataEvent":
      parts.push(`data=${JSON.stringify([...ev.data.keys()])}`);
      break;
    case "GatherDepBusyEvent":
    case "GatherDepNetworkFailureEvent":
    case "GatherDepFailureEvent":
    case "RemoveWorkerEvent":
    case "RetryBusyWorkerEvent":
      parts.push(`worker=${ev.worker}`);
      break;
    case "ExecuteSuccessEvent":
    case "ExecuteFailureEvent":
      parts.push(`key=${ev.key} run=${ev.runId}`);
      break;
    case "RescheduleEvent":
    case "CancelComputeEvent":
    case "StealRequestEvent":
    case "SecedeEvent":
      parts.push(`key=${ev.key}`);
      break;
    default:
      break;
  }
  return `${ev.stimulusId}: ${ev.cls}(${parts.join(" ")})`;
}

/**
 * Whether, in `records`, another task's transition recommended `ts` go to `state`:
 * the cause of the seed quirks the driver tolerates (a dependent going released ->
 * waiting recommends `fetch` for its dependencies not in memory; one being released
 * recommends `released` for those no one waits for). No other transition recommends
 * these for another task; the dependent itself may be gone by the stimulus's end.
 */
function recommendedByDependent(
  ts: TaskState,
  state: TaskStateState,
  records: readonly LogEntry[],
): boolean {
  for (const record of records) {
    const recs = record[4];
    if (record.length !== 7 || record[0] === ts.key || !(recs instanceof LoggedRecs)) continue;
    if (recs.toMap().get(ts.key) === state) return true;
  }
  return false;
}
