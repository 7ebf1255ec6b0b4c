import type {
  SchedulerMessage,
  SchedulerToClientMessage,
  SchedulerToWorkerMessage,
} from "../../protocol/messages.ts";
import { callGuarded } from "../../util/guardedCall.ts";
import { HeapSet } from "../../util/heapSet.ts";
import { keySplit } from "../../util/keySplit.ts";
import { AssertionError } from "../../util/pyErrors.ts";
import { showValue } from "../../util/showValue.ts";
import { reduceReplicas } from "./activeMemoryManager.ts";
import { holderAddresses, isLostActor } from "./bookkeeping.ts";
import { handleClientMessage } from "./clientHandlers.ts";
import { ClientInfo } from "./clientInfo.ts";
import type { Dataset } from "./datasets.ts";
import { Durations } from "./durations.ts";
import {
  InvalidStimulus,
  InvalidTaskState,
  InvalidTransition,
  TransitionCounterMaxExceeded,
} from "./errors.ts";
import type { SchedulerEvent } from "./events.ts";
import { stimulusIdOf, unreachable } from "./events.ts";
import { validateEventShape } from "./eventValidation.ts";
import {
  type ResolvedSchedulerStateOptions,
  resolveOptions,
  type SchedulerStateOptions,
} from "./options.ts";
import { Outbox } from "./outbox.ts";
import { taskSlotsAvailable } from "./placement.ts";
import type { Replication } from "./replicate.ts";
import { advanceRetirements, type Retirement } from "./retire.ts";
import { itemsOf } from "./sets.ts";
import { handleStealRequest } from "./stealing.ts";
import { WorkStealing } from "./stealTracking.ts";
import { type LoggedRecs, NO_RECS, schedulerStory, type TransitionLogEntry } from "./story.ts";
import { TaskGroup } from "./taskGroup.ts";
import { IN_PLAY, type SchedulerTaskStateName, type TaskState } from "./taskState.ts";
import { StimulusLog, type StimulusRecord, TransitionLog } from "./transitionLog.ts";
import { TRANSITIONS, type TransitionArgs } from "./transitions.ts";
import { validateState, validateTask } from "./validation.ts";
import { handleWorkerMessage } from "./workerHandlers.ts";
import type { WorkerInfo } from "./workerInfo.ts";
import { RegistrationCheck, removeWorker } from "./workerLifecycle.ts";
import { balance } from "./workStealing.ts";

export type { StimulusRecord } from "./transitionLog.ts";

/** A steal the scheduler asked a victim for and awaits the `steal-response` of. */
export interface InFlightSteal {
  /** The worker asked to give the task up. */
  readonly victim: WorkerInfo;
  /** The worker the task moves to if the victim gives it up. */
  readonly thief: WorkerInfo;
  /** The stimulus of the `steal-request` sent, which the response carries back. */
  readonly stimulusId: string;
  /** The seconds the task added to the victim's occupancy when requested. */
  readonly victimDuration: number;
  /** The seconds it will add to the thief's: its expected duration plus fetching its inputs. */
  readonly thiefDuration: number;
}

/** A graph a client submitted, as scheduler plugins are told of it (`updateGraph`). */
export interface GraphUpdate {
  /** The client's id. */
  readonly client: string;
  /** The keys the client wants results of. */
  readonly keys: readonly string[];
  /** The keys of the tasks made for it (those known already are not). */
  readonly tasks: readonly string[];
  /** The stimulus of the submission (as `transition` is given). */
  readonly stimulusId: string;
}

/** What the state machine calls of a scheduler plugin (see {@link SchedulerState.plugins}). */
export interface SchedulerTransitionPlugin {
  /**
   * Called after each transition of `key` from `start` to `finish`, caused by stimulus `stimulusId`
   * (Dask's `SchedulerPlugin.transition`).
   */
  transition?(
    key: string,
    start: SchedulerTaskStateName,
    finish: SchedulerTaskStateName,
    stimulusId: string,
  ): void;
}

/**
 * The scheduler's brain: a pure, deterministic state machine in the style of
 * the worker's (and of Dask's `SchedulerState`).
 *
 * Feed it stimuli with {@link handleStimulus}; it returns the messages to send,
 * each addressed to a worker or a client. It does no I/O, reads no wall clock
 * (`options.clock` is injected) and draws no random numbers, so the same
 * configuration and stimuli always produce the same messages.
 *
 * Each stimulus is turned into recommendations `{task: finish state}`, which
 * are processed (last in, first out, as Dask's `dict.popitem`) through the
 * transition table in `transitions.ts` until none are left. Transitions not in
 * the table go through `released`.
 *
 * The public fields are there for shells, tests and validation to read; only
 * this package mutates them.
 */
export class SchedulerState {
  /** The configuration, defaults filled in. */
  readonly options: ResolvedSchedulerStateOptions;
  /** The injected clock. */
  readonly clock: () => number;
  /** Validate every touched task after each stimulus. */
  validate: boolean;
  /**
   * Plugins whose `transition(key, start, finish, stimulusId)` is called after
   * every transition, one call per record of the transition log (Dask's
   * `SchedulerPlugin.transition`). An error it throws, or the rejection of a
   * promise it returns (not awaited), goes to {@link onPluginError}, and the
   * state machine goes on.
   */
  readonly plugins: Map<string, SchedulerTransitionPlugin> = new Map();
  /** Told of an error a plugin's `transition` threw (or rejected with). Default: nothing. */
  onPluginError: (name: string, err: unknown) => void = () => {};
  /**
   * Told of each graph a client submitted, once its new tasks are made and
   * before their transitions (Dask's `SchedulerPlugin.update_graph`); must not
   * throw. Default: nothing.
   */
  onGraphUpdate: (update: GraphUpdate) => void = () => {};
  /** Told of each restart a client asks for, before it is carried out (Dask's `SchedulerPlugin.restart`); must not throw. */
  onRestart: () => void = () => {};

  /** `{key: task}`: every task not forgotten. */
  readonly tasks: Map<string, TaskState> = new Map();
  /** `{address: worker}`: every connected worker, in registration order. */
  readonly workers: Map<string, WorkerInfo> = new Map();
  /** Workers whose status is `running`: the only ones that get new tasks. */
  readonly running: Set<WorkerInfo> = new Set();
  /** Running workers with fewer tasks executing than threads (Dask's `idle`). */
  readonly idle: Set<WorkerInfo> = new Set();
  /** Running workers with free queuing slots (Dask's `idle_task_count`); empty when queuing is off. */
  readonly idleTaskCount: Set<WorkerInfo> = new Set();
  /** `{client id: client}`. */
  readonly clients: Map<string, ClientInfo> = new Map();
  /** Tasks in `queued`, by priority. */
  readonly queued: HeapSet<TaskState> = new HeapSet((ts) => ts.priority);
  /** Tasks in `no-worker`, with the `clock()` at which they became unrunnable. */
  readonly unrunnable: Map<TaskState, number> = new Map();
  /** Steals awaiting their `steal-response`, by task. */
  readonly steals: Map<TaskState, InFlightSteal> = new Map();
  /** Which tasks could be stolen, the steals' in-flight totals and counts (see `workStealing.ts`). */
  readonly workStealing: WorkStealing = new WorkStealing();
  /** Tasks in memory on more than one worker (Dask's `replicated_tasks`), for the Active Memory Manager. */
  readonly replicatedTasks: Set<TaskState> = new Set();
  /** Replicas the Active Memory Manager asked workers to drop (see `activeMemoryManager.ts`). */
  replicasDropped = 0;
  /** Replicas removed so far, for any reason: tells a stimulus that only added some (see `retire.ts`). */
  replicaRemovals = 0;
  /** `replicate` requests waiting for copies. */
  readonly replications: Set<Replication> = new Set();
  /**
   * The requests of {@link replications} waiting for a copy of each task, so that
   * a copy arriving (`add-keys`) or failing finds its requests without looking
   * at every one (a client replicating its futures one call each).
   */
  readonly replicationsByTask: Map<TaskState, Set<Replication>> = new Map();
  /** `retire-workers` requests under way (see `retire.ts`). */
  readonly retirements: Set<Retirement> = new Set();
  /** Published datasets, by name (see `datasets.ts`). */
  readonly datasets: Map<string, Dataset> = new Map();
  /** `{key prefix: group}`: groups with at least one task not forgotten. */
  readonly taskGroups: Map<string, TaskGroup> = new Map();
  /** The expected duration of each function's tasks, learnt from finished tasks. */
  readonly durations: Durations;

  /** Sum of the running and paused workers' threads. */
  totalNthreads = 0;
  /** Tasks sent to workers so far (drives round-robin placement). */
  nTasks = 0;
  /** Incremented by each `update-graph`; the second element of priorities. */
  generation = 0;
  /** Last run id handed out in a `compute-task`. */
  runIdCounter = 0;
  /** Transitions made so far (a transition through `released` counts twice). */
  transitionCounter = 0;
  /** Workers registered so far (their `index`). */
  workerCounter = 0;
  /**
   * Tasks that reached `memory` or `erred`, each counted once while it lives
   * (`TaskState.everDone`): a task computed again after its worker was lost
   * is not counted twice. A key forgotten and submitted anew is a new task.
   */
  tasksDone = 0;
  /**
   * Of {@link tasksDone}, those done by erring (`TaskState.doneErred`), a task erred
   * because an input did included: what progress shows as erred (Dask's bar, red).
   */
  tasksDoneErred = 0;

  /** Transition log: `(key, start, finish, recommendations, stimulusId, time)`. */
  readonly log: TransitionLog;
  /** One record per handled stimulus. */
  readonly stimulusLog: StimulusLog;

  /** The stimulus being handled. */
  stimulusId = "";
  /** `clock()` when the stimuli being handled arrived (once per `handleStimulus`): stamps their records. */
  now = 0;
  /** Stimuli handled so far, the current one included. */
  stimulusCount = 0;
  /** Placement pass counter for `WorkerInfo.scratchEpoch`. */
  placementEpoch = 0;
  /** Placement pass counter for `WorkerInfo.validEpoch`. */
  validEpoch = 0;
  /** Reused by placement for the workers valid for one task. */
  readonly scratchWorkers: WorkerInfo[] = [];

  private readonly outbox = new Outbox();
  /** Tasks with a pending recommendation (`ts.recommended`), processed last in, first out. */
  private readonly recStack: TaskState[] = [];
  private curRecs: string[] | null = null;
  private touched: Set<TaskState> | null = null;

  /** An empty scheduler: no workers, clients or tasks. */
  constructor(options: SchedulerStateOptions = {}) {
    this.options = resolveOptions(options);
    this.durations = new Durations(this.options.unknownTaskDuration);
    this.clock = this.options.clock;
    this.validate = this.options.validate;
    this.log = new TransitionLog(this.options.logLength);
    this.stimulusLog = new StimulusLog(this.options.stimulusLogLength);
  }

  // -------------------------------------------------------------------------
  // Entry point
  // -------------------------------------------------------------------------

  /**
   * Handle stimuli one after the other and return the messages to send, in
   * order. Each stimulus's recommendations are processed until none are left;
   * then queued root-ish tasks are released to workers with free slots.
   *
   * Throws `InvalidStimulus` if any stimulus is malformed, before handling any
   * of them (the machine is unchanged). Throws `InvalidTransition` for a
   * transition the table does not allow and `InvalidTaskState` when validation
   * is on and a touched task is inconsistent: bugs, after which the machine is
   * not to be trusted (the messages of the call are dropped).
   */
  handleStimulus(...events: SchedulerEvent[]): SchedulerMessage[] {
    return this.handleStimuli(events);
  }

  /**
   * {@link handleStimulus} for an array of stimuli: shells pass what arrived
   * together (tens of thousands at once overflow the stack as spread arguments).
   */
  handleStimuli(events: readonly SchedulerEvent[]): SchedulerMessage[] {
    this.checkStimuli(events);
    // The stimuli of one call arrived together (as the worker's handleStimulus reads its clock).
    this.now = this.clock();
    try {
      for (const ev of events) this.handleOne(ev);
    } catch (e) {
      // A broken invariant: drop what this call produced so that it does not
      // leak into the next one. The machine itself cannot be trusted any more.
      this.outbox.take();
      for (const ts of this.recStack) ts.recommended = null;
      this.recStack.length = 0;
      this.curRecs = null;
      this.touched = null;
      throw e;
    }
    return this.outbox.take();
  }

  /**
   * Throw `InvalidStimulus` unless every event is well formed and every worker
   * registering may (`RegistrationCheck`: an address or name not taken, nor
   * taken earlier in the batch and not freed by a `remove-worker` earlier in it).
   */
  private checkStimuli(events: readonly SchedulerEvent[]): void {
    let registrations: RegistrationCheck | null = null;
    for (const ev of events) {
      try {
        validateEventShape(ev);
      } catch (err) {
        // Reading a hostile message may throw on its own (a getter, a Proxy): that is a
        // malformed message too, not a failure of the machine, which would stop the scheduler.
        if (err instanceof InvalidStimulus) throw err;
        const why = err instanceof Error ? err.message : showValue(err);
        throw new InvalidStimulus(`invalid stimulus: ${why}`, { cause: err });
      }
      if (ev.kind === "remove-worker") {
        (registrations ??= new RegistrationCheck(this)).remove(ev.worker);
      } else if (ev.kind === "worker-message" && ev.msg.op === "register-worker") {
        (registrations ??= new RegistrationCheck(this)).register(ev.msg);
      }
    }
  }

  private handleOne(ev: SchedulerEvent): void {
    const stimulusId = stimulusIdOf(ev);
    this.stimulusId = stimulusId;
    this.stimulusCount++;
    this.logStimulus(ev, stimulusId);
    if (this.validate) this.touched = new Set();
    const removalsBefore = this.replicaRemovals;
    switch (ev.kind) {
      case "worker-message":
        handleWorkerMessage(this, ev.worker, ev.msg);
        break;
      case "client-message":
        handleClientMessage(this, ev.msg);
        break;
      case "remove-worker":
        removeWorker(this, ev.worker, ev.expected === true);
        break;
      case "steal-request":
        handleStealRequest(this, ev);
        break;
      case "balance":
        // Logged only when it asked for steals (below): rounds run every 100 ms,
        // and those that change nothing would push every other record out of the log.
        if (balance(this) > 0) {
          this.stimulusLog.push(stimulusId, "balance", null, "scheduler", null, this.now);
        }
        break;
      case "reduce-replicas":
        // Logged only when it dropped something, as `balance` is.
        if (reduceReplicas(this) > 0) {
          this.stimulusLog.push(stimulusId, "reduce-replicas", null, "scheduler", null, this.now);
        }
        break;
      default:
        unreachable(ev, "stimulus");
    }
    this.processRecommendations();
    // A retirement moves on as copies arrive or fail, workers leave and tasks finish.
    // One that fails resumes its worker, which may run tasks waiting in no-worker:
    // they go now, not with whatever stimulus comes next.
    if (this.retirements.size > 0) {
      const onlyAdded =
        ev.kind === "worker-message" &&
        ev.msg.op === "add-keys" &&
        this.replicaRemovals === removalsBefore;
      advanceRetirements(this, onlyAdded);
      this.processRecommendations();
    }
    this.queueSlotsMaybeOpened();
    // Only recommendations made inside a transition are logged (with it); those the
    // handler and the queue made outside any were acted on and must not pile up.
    this.curRecs = null;
    if (this.touched !== null) {
      // Left over, a recommendation would be carried out by the next stimulus, whenever it came.
      if (this.recStack.length > 0) {
        const left = this.recStack.map((ts) => `${ts.key} → ${ts.recommended}`).join(", ");
        throw new AssertionError(`recommendations left unprocessed after ${stimulusId}: ${left}`);
      }
      const touched = this.touched;
      this.touched = null;
      for (const ts of touched) {
        if (ts.state !== "forgotten") this.validateTaskWithStory(ts);
      }
    }
  }

  private logStimulus(ev: SchedulerEvent, stimulusId: string): void {
    const time = this.now;
    const kind = ev.kind;
    switch (kind) {
      case "worker-message": {
        const m = ev.msg as { key?: unknown };
        const key = typeof m.key === "string" ? m.key : null;
        this.stimulusLog.push(stimulusId, kind, ev.msg.op, ev.worker, key, time);
        return;
      }
      case "client-message":
        this.stimulusLog.push(stimulusId, kind, ev.msg.op, ev.msg.clientId, null, time);
        return;
      case "remove-worker":
        this.stimulusLog.push(stimulusId, kind, null, ev.worker, null, time);
        return;
      case "steal-request":
        this.stimulusLog.push(stimulusId, kind, null, ev.victim, ev.key, time);
        return;
      case "balance":
      case "reduce-replicas":
        return; // once it has done something: see handleOne
    }
  }

  // -------------------------------------------------------------------------
  // Recommendations and transitions
  // -------------------------------------------------------------------------

  /**
   * Recommend that `ts` go to `finish`. A task recommended twice keeps its
   * place in the work list with the latest finish state (Python dict update
   * semantics); the work list is processed last in, first out.
   */
  recommend(ts: TaskState, finish: SchedulerTaskStateName): void {
    if (ts.recommended === null) this.recStack.push(ts);
    ts.recommended = finish;
    const recs = this.curRecs;
    if (recs === null) this.curRecs = [ts.key, finish];
    else recs.push(ts.key, finish);
  }

  /** Process recommendations until none are left (Dask's `_transitions`). */
  processRecommendations(): void {
    const stack = this.recStack;
    while (stack.length > 0) {
      const ts = stack.pop() as TaskState;
      const finish = ts.recommended as SchedulerTaskStateName;
      ts.recommended = null;
      if (finish === "released") {
        if (isStaleRelease(ts)) continue;
        if (isDoomedRelease(ts)) {
          this.transition(ts, "erred");
          continue;
        }
        // A waiter of an erred input gets its blame with a recommendation to
        // err; a release that overrides it (nothing needs the task any more)
        // leaves it released, not erred, and the blame stale. Dask keeps it:
        // once the input is retried and fine, a new graph on the task would
        // err at once, blamed on it.
        if (ts.state !== "erred") ts.exceptionBlame = null;
      } else if (finish === "waiting" && isOrphan(ts)) {
        this.transition(ts, "forgotten");
        continue;
      }
      this.transition(ts, finish);
    }
  }

  /**
   * Move `ts` to `finish` now, through the transition table or, for a pair not
   * in it, through `released` (Dask's `_transition`); `args` carry a worker's
   * report to `memory` or `erred`. Returns the recommendations it made, which
   * are also queued. A forgotten task, or one already in `finish`, is left alone.
   */
  transition(ts: TaskState, finish: SchedulerTaskStateName, args?: TransitionArgs): LoggedRecs {
    const start = ts.state;
    if (start === finish || start === "forgotten") return NO_RECS;
    this.transitionCounter++;
    const max = this.options.transitionCounterMax;
    if (max !== false && this.transitionCounter >= max) {
      throw new TransitionCounterMaxExceeded(ts.key, start, finish, this.story(ts.key));
    }
    if (this.touched !== null) this.touched.add(ts);
    const saved = this.curRecs;
    this.curRecs = null;
    let logStart = start;
    try {
      const func = TRANSITIONS[start][finish];
      if (func !== undefined) {
        func(this, ts, args);
      } else if (start !== "released" && finish !== "released") {
        const inner = this.transition(ts, "released");
        // As Dask's scheduler: a recommendation the first leg made for this very
        // task takes precedence over `finish`.
        let via: SchedulerTaskStateName = finish;
        for (let i = inner.length - 2; i >= 0; i -= 2) {
          if (inner[i] === ts.key) {
            via = inner[i + 1] as SchedulerTaskStateName;
            break;
          }
        }
        const func2 = TRANSITIONS.released[via];
        if (func2 === undefined) {
          throw new InvalidTransition(ts.key, "released", via, this.story(ts.key));
        }
        func2(this, ts, args);
        logStart = "released";
      } else {
        throw new InvalidTransition(ts.key, start, finish, this.story(ts.key));
      }
    } catch (e) {
      this.curRecs = saved;
      if (e instanceof InvalidTransition) throw e;
      throw new InvalidTransition(ts.key, start, finish, this.story(ts.key), { cause: e });
    }
    if (!ts.everDone && (ts.state === "memory" || ts.state === "erred")) {
      ts.everDone = true;
      this.tasksDone++;
      if (ts.state === "erred") {
        ts.doneErred = true;
        this.tasksDoneErred++;
      }
    }
    // The log keeps the recommendations for `logLength` transitions: an array grown by
    // push() has spare capacity, so more than one recommendation is kept as an exact copy.
    const made = this.curRecs as string[] | null; // set by the transition function
    const recs: LoggedRecs = made === null ? NO_RECS : made.length > 2 ? made.slice() : made;
    this.log.push(ts.key, logStart, ts.state, recs, this.stimulusId, this.now);
    this.curRecs = saved;
    if (this.plugins.size > 0) this.notifyPlugins(ts.key, logStart, ts.state);
    return recs;
  }

  private notifyPlugins(
    key: string,
    start: SchedulerTaskStateName,
    finish: SchedulerTaskStateName,
  ): void {
    for (const [name, plugin] of this.plugins) {
      if (typeof plugin.transition !== "function") continue;
      // An async hook's rejection, dropped, was the process's unhandled rejection.
      callGuarded(
        () => plugin.transition?.(key, start, finish, this.stimulusId),
        (err) => this.onPluginError(name, err),
      );
    }
  }

  /** Validate `ts` after this stimulus (with validation on), though no transition moved it. */
  touch(ts: TaskState): void {
    if (this.touched !== null) this.touched.add(ts);
  }

  /** Log a change that is not a state transition (a confirmed steal: processing → processing). */
  logSameState(ts: TaskState): void {
    this.log.push(ts.key, ts.state, ts.state, NO_RECS, this.stimulusId, this.now);
    if (this.touched !== null) this.touched.add(ts);
  }

  // -------------------------------------------------------------------------
  // Queuing
  // -------------------------------------------------------------------------

  /**
   * Send queued tasks to workers with free slots, best priority first
   * (Dask's `stimulus_queue_slots_maybe_opened`). Runs after every stimulus.
   * Goes on while a slot is free (Dask sends as many as the slots it counts
   * first): a queued task with inputs too large for the worker's memory limit
   * errs as it is sent (`addToProcessing`), giving its slot back.
   */
  queueSlotsMaybeOpened(): void {
    while (this.queued.size > 0 && this.idleTaskCount.size > 0) {
      const qts = this.queued.peek();
      this.recommend(qts, "processing");
      this.processRecommendations();
      if (qts.state === "queued") return; // no worker had a slot after all
    }
  }

  // -------------------------------------------------------------------------
  // Bookkeeping shared by transitions and handlers
  // -------------------------------------------------------------------------

  /** The group of the tasks whose keys have the prefix of `key`, created if new. */
  taskGroupOf(key: string): TaskGroup {
    const name = keySplit(key);
    let tg = this.taskGroups.get(name);
    if (tg === undefined) {
      tg = new TaskGroup(name);
      this.taskGroups.set(name, tg);
    }
    return tg;
  }

  /** The size of a task's result, or `defaultDataSize` while unknown. */
  getNbytes(ts: TaskState): number {
    return ts.nbytes >= 0 ? ts.nbytes : this.options.defaultDataSize;
  }

  /** Expected compute seconds of `ts`: the average of its function so far, or `unknownTaskDuration`. */
  taskDuration(ts: TaskState): number {
    return this.durations.expected(ts.runSpec?.fn);
  }

  /**
   * Fold a measured compute time of `fn` into its average (as Dask's task
   * prefixes do); the workers running tasks of `fn` count them at the new one
   * when next read (see occupancy.ts).
   */
  observeDuration(fn: string, seconds: number): void {
    this.durations.observe(fn, seconds);
  }

  /**
   * Recompute whether `ws` is idle (fewer tasks executing than threads) and
   * whether it has free queuing slots (Dask's `check_idle_saturated`).
   */
  checkIdleSaturated(ws: WorkerInfo): void {
    if (ws.status !== "running" || this.workers.get(ws.address) !== ws) {
      this.idle.delete(ws);
      this.idleTaskCount.delete(ws);
      return;
    }
    const executing = ws.processing.size - ws.longRunning.size;
    if (executing < ws.nthreads) this.idle.add(ws);
    else this.idle.delete(ws);
    const saturation = this.options.workerSaturation;
    if (Number.isFinite(saturation) && taskSlotsAvailable(ws, saturation) > 0) {
      this.idleTaskCount.add(ws);
    } else {
      this.idleTaskCount.delete(ws);
    }
  }

  /** The client with id `id`, created if new. */
  ensureClient(id: string): ClientInfo {
    let cs = this.clients.get(id);
    if (cs === undefined) {
      cs = new ClientInfo(id);
      this.clients.set(id, cs);
    }
    return cs;
  }

  /** Queue `msg` for the worker `ws`. */
  sendToWorker(ws: WorkerInfo, msg: SchedulerToWorkerMessage): void {
    this.outbox.toWorker(ws, msg);
  }

  /** Queue `free-keys` of `key` for the worker `ws` (joining one just queued, see `Outbox`). */
  freeKeys(ws: WorkerInfo, key: string): void {
    this.outbox.freeKeys(ws, key, this.stimulusId);
  }

  /** Queue `msg` for the client `cs`. */
  sendToClient(cs: ClientInfo, msg: SchedulerToClientMessage): void {
    if (!cs.standIn) this.outbox.toClient(cs, msg);
  }

  /** Queue `msg` for every client that wants `ts`. */
  sendToWhoWants(ts: TaskState, msg: SchedulerToClientMessage): void {
    for (const cs of ts.whoWants) if (!cs.standIn) this.outbox.toClient(cs, msg);
  }

  // -------------------------------------------------------------------------
  // Diagnostics
  // -------------------------------------------------------------------------

  /**
   * The transition log records involving any of these keys or stimulus ids
   * (as the task itself, as a recommended task, or as the stimulus), oldest first.
   */
  story(...keysOrStimulusIds: string[]): TransitionLogEntry[] {
    return schedulerStory(new Set(keysOrStimulusIds), this.log);
  }

  /** The stimulus records with this stimulus id or concerning this key, oldest first. */
  stimulusStory(keyOrStimulusId: string): StimulusRecord[] {
    const out: StimulusRecord[] = [];
    for (const r of this.stimulusLog) {
      if (r.stimulusId === keyOrStimulusId || r.key === keyOrStimulusId) out.push(r);
    }
    return out;
  }

  /** `{key: [worker address, …]}` for the given keys (unknown keys map to `[]`). */
  getWhoHas(keys: Iterable<string>): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const key of keys) {
      const ts = this.tasks.get(key);
      out[key] = ts === undefined ? [] : holderAddresses(ts);
    }
    return out;
  }

  /**
   * The size of each result in bytes, as its workers reported it (Dask's
   * `get_nbytes`): of the `keys` given (null: every task), those whose size
   * is known (computed, or put in memory), in the order given; with
   * `summary`, summed by key prefix (`keySplit`). Dask also lists unknown
   * sizes, as -1.
   */
  getNbytesOf(keys: Iterable<string> | null, summary: boolean): Record<string, number> {
    const out: Record<string, number> = {};
    const add = (key: string, ts: TaskState | undefined): void => {
      if (ts === undefined || ts.nbytes < 0) return;
      const k = summary ? keySplit(key) : key;
      out[k] = (summary ? (out[k] ?? 0) : 0) + ts.nbytes;
    };
    if (keys === null) for (const [key, ts] of this.tasks) add(key, ts);
    else for (const key of new Set(keys)) add(key, this.tasks.get(key));
    return out;
  }

  /**
   * The keys each of the `workers` is processing (Dask's `get_processing`):
   * assigned to it and not yet reported done, in the order assigned; [] for
   * an unknown address.
   */
  getProcessing(workers: Iterable<string>): Record<string, string[]> {
    return this.keysOfWorkers(workers, (ws) => ws.processing.keys());
  }

  /** The keys each of the `workers` holds (Dask's `get_has_what`): [] for an unknown address. */
  getHasWhat(workers: Iterable<string>): Record<string, string[]> {
    return this.keysOfWorkers(workers, (ws) => ws.hasWhat);
  }

  /** `{address: keys of the tasks tasksOf(its worker) gives}` for `workers`: [] for an unknown address. */
  private keysOfWorkers(
    workers: Iterable<string>,
    tasksOf: (ws: WorkerInfo) => Iterable<TaskState>,
  ): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const address of workers) {
      const ws = this.workers.get(address);
      const keys: string[] = [];
      if (ws !== undefined) for (const ts of tasksOf(ws)) keys.push(ts.key);
      out[address] = keys;
    }
    return out;
  }

  /** Check one task's invariants; throws `InvalidTaskState` with its story. */
  validateTask(ts: TaskState): void {
    this.validateTaskWithStory(ts);
  }

  /**
   * Check the whole machine: every task, worker, client and collection.
   * Throws `InvalidTaskState` (a task) or `AssertionError` (anything else).
   */
  validateState(): void {
    validateState(this, (ts) => this.validateTaskWithStory(ts));
  }

  private validateTaskWithStory(ts: TaskState): void {
    try {
      validateTask(this, ts);
    } catch (e) {
      throw new InvalidTaskState(ts.key, ts.state, this.story(ts.key), { cause: e });
    }
  }
}

/**
 * A recommendation to release a result that is needed again since it was made
 * (a task was placed on one of its holders meanwhile, or a client asked for
 * it) is stale: carried out, it would free the input of a task just assigned
 * (Dask does; found by the simulator, seed 5537). Not so for an actor whose
 * object is lost: the handles left do not make it needed-and-held.
 */
function isStaleRelease(ts: TaskState): boolean {
  return (
    ts.state === "memory" &&
    ts.whoHas.size > 0 &&
    (ts.waiters.size > 0 || ts.whoWants.size > 0) &&
    !isLostActor(ts)
  );
}

/**
 * A recommendation to compute a task that nothing needs any more (no client
 * wants it, no task depends on it) is stale: it overrode the recommendation to
 * forget it made when its last dependent was forgotten in the same stimulus
 * (a later one sent it back to waiting, as a waiter of a lost input). Carried
 * out, the task would be computed for nobody and stay released for ever (Dask
 * does; found by the simulator's scatter workload, seed 953). It is forgotten
 * instead, as it was going to be.
 */
function isOrphan(ts: TaskState): boolean {
  return ts.whoWants.size === 0 && ts.dependents.size === 0 && ts.runSpec !== null;
}

/**
 * A recommendation to release a task in play that overrode its recommendation
 * to err (an input of it erred), processed once something needs the task
 * again: released, it would stay released under its waiters (its blame stops
 * it from waiting again). It errs instead, as it was going to (Dask has the
 * same gap; found by the simulator, seed 2075).
 */
function isDoomedRelease(ts: TaskState): boolean {
  if (!IN_PLAY.has(ts.state) || ts.exceptionBlame === null) return false;
  if (ts.waiters.size === 0 && ts.whoWants.size === 0) return false;
  for (const dts of itemsOf(ts.dependencies)) if (dts.state === "erred") return true;
  return false;
}
