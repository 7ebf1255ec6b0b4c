import { getAddressHost } from "../../util/address.ts";
import { BoundedDeque } from "../../util/boundedDeque.ts";
import { callGuarded } from "../../util/guardedCall.ts";
import { HeapSet } from "../../util/heapSet.ts";
import { PyRandom } from "../../util/mt19937.ts";
import { comparePriority, type Priority } from "../../util/priority.ts";
import { assert, KeyError, PyTypeError, setRemove } from "../../util/pyErrors.ts";
import { showValue } from "../../util/showValue.ts";
import { sizeof as defaultSizeof, typeName as defaultTypeName } from "../../util/sizeof.ts";
import type { DataStore, WorkerPlugin } from "./dataStore.ts";
import { errorMessage as defaultErrorMessage, type ErrorMessage } from "./errorMessage.ts";
import {
  formatLogEntry,
  InvalidTaskState,
  InvalidTransition,
  RecommendationsConflict,
  TransitionCounterMaxExceeded,
} from "./errors.ts";
import { eventKey, type MapLike, type StateMachineEvent, toMap, type WhoHas } from "./events.ts";
import { GatherCandidates } from "./gatherCandidates.ts";
import { handleEvent } from "./handlers.ts";
import { GatherDep, type Instruction, TaskFinishedMsg } from "./instructions.ts";
import { keepWorkerStateShapes } from "./keptShapes.ts";
import { type LogEntry, LoggedRecs, NO_RECS, TransitionLog, workerStory } from "./log.ts";
import { checkWorkerStateOptions } from "./options.ts";
import { type Finish, finishState, Recs, sameFinish } from "./recs.ts";
import { safeSizeof, safeTypeName } from "./safeServices.ts";
import { TaskCounter } from "./taskCounter.ts";
import {
  NO_TASKS,
  NO_WORKERS,
  READY,
  SharedHolders,
  TaskState,
  type TaskStateState,
  withoutTask,
} from "./taskState.ts";
import { type DebugValue, workerStateToDict } from "./toDict.ts";
import { TouchedTasks } from "./touchedTasks.ts";
import { lookupTransition } from "./transitions.ts";
import { type ValidateStateOptions, validateState, validateTask } from "./validation.ts";

/** The bits of `TaskState.heapMarks` that say a task is in `ready` / `constrained`. */
const READY_MARK = 1;
const CONSTRAINED_MARK = 2;

/**
 * What `new WorkerState(options)` takes: the seed's constructor arguments, plus the
 * injected clocks, randomness and value functions.
 */
export interface WorkerStateOptions {
  /** Number of tasks that may execute at once. Default 1. */
  nthreads?: number;
  /** This worker's address; must be set before the first stimulus. */
  address?: string;
  /** Where values are kept. Default: a new Map. */
  data?: DataStore;
  /** `{key: thread id}`, filled by the shell. */
  threads?: Map<string, number>;
  /** Worker plugins, whose `transition` hook is called after every transition. */
  plugins?: Map<string, WorkerPlugin>;
  /** Total abstract resources, `{name: amount}`. */
  resources?: MapLike<number>;
  /** Maximum number of concurrent incoming transfers. Default 9999. */
  transferIncomingCountLimit?: number;
  /** Run the expensive consistency checks after every stimulus. Default true. */
  validate?: boolean;
  /** Raise when the transition counter reaches this; false for never. */
  transitionCounterMax?: number | false;
  /** Limit of bytes for incoming transfers. Default Infinity. */
  transferIncomingBytesLimit?: number;
  /** Bytes to gather from one peer in one GatherDep, beyond the first task. Default Infinity. */
  transferMessageBytesLimit?: number;
  /** Wall-clock seconds, for the logs. Default: always 0 (a pure core reads no clock). */
  clock?: () => number;
  /** Monotonic seconds, for the task counter. Default: `clock`. */
  monotonic?: () => number;
  /** Source of `random()` for tie-breaks. Default: Python's `random.Random(0)`. */
  rng?: { random(): number };
  /**
   * Size in bytes of a value whose size the scheduler did not say. Where it
   * throws, the size is 1e6 (Dask's `safe_sizeof`).
   */
  sizeof?: (value: unknown) => number;
  /** Type name of a value, for `TaskFinishedMsg.typename`. Where it throws, the default's. */
  typeName?: (value: unknown) => string;
  /** Conversion of an error thrown by the data store into texts. */
  errorMessage?: (err: unknown) => ErrorMessage;
  /**
   * Told about an error thrown by a plugin's hook, or the rejection of a
   * promise it returned (either is otherwise ignored).
   */
  onPluginError?: (name: string, err: unknown) => void;
  /**
   * Steers the choices that Dask leaves to Python's set order (see
   * {@link WorkerStateChooser}). Only for replay tools; absent, nothing changes.
   */
  chooser?: WorkerStateChooser;
}

/**
 * Picks where the seed's outcome depends on Python's set iteration order, which no
 * port can reproduce: the order in which pending recommendations are transitioned
 * (they were added while iterating sets; this decides, e.g., which of several tasks
 * made ready by one event takes the free thread) and the tie-break between equally
 * good peers to gather from. `weft replay --follow-log` uses it to follow a recorded
 * log. Consulted only when given; it cannot make the machine do anything the seed
 * could not have done with some set order.
 */
export interface WorkerStateChooser {
  /**
   * The pending recommendation to transition next, in place of the default
   * (`dict.popitem()`: the one added last). Return a task of `recs`, or null for the
   * default.
   */
  nextRecommendation(recs: Recs): TaskState | null;
  /**
   * The tie-break of a peer in `_select_workers_for_gather` (after priority, locality
   * and number of tasks; lower goes first), given the random number drawn for it.
   * Return `rnd` for the default.
   */
  gatherTieBreak(worker: string, rnd: number): number;
}

const zeroClock = () => 0;

/**
 * The key of every heap of every WorkerState. A closure per heap would be one more
 * object that optimized code inlining it holds weakly and loses when the heap dies
 * (see keptShapes.ts).
 */
const taskPriority = (ts: TaskState): Priority => ts.priority as Priority;

/**
 * State machine encapsulating the lifetime of all tasks on a worker: the port of
 * Dask's `WorkerState`.
 *
 * The attributes are heavily correlated with each other: never modify them directly.
 * The state is mutated exclusively through {@link WorkerState.handleStimulus}.
 */
export class WorkerState {
  private _address: string | undefined;
  /** `{key: TaskState}`: the tasks this worker knows. */
  readonly tasks = new Map<string, TaskState>();
  /** `{key: thread id}` of running tasks (shared with the shell). */
  readonly threads: Map<string, number>;
  /** Values of tasks in memory. */
  readonly data: DataStore;
  /** Worker plugins. */
  readonly plugins: Map<string, WorkerPlugin>;
  /** Tasks ready to run without resource constraints, by priority. */
  readonly ready: HeapSet<TaskState>;
  /** Tasks ready to run that wait for resources, by priority. */
  readonly constrained: HeapSet<TaskState>;
  /** Number of tasks that can execute in parallel. */
  nthreads: number;
  /** False while paused: no new executions or transfers start. */
  running = true;
  /** Tasks waiting for data. */
  readonly waiting = new Set<TaskState>();
  /** `{worker: keys}`: the data we care about that we think each peer has. */
  readonly hasWhat = new Map<string, Set<string>>();
  /** `{worker: heap of tasks in fetch}`: tasks to fetch, per peer that holds them. */
  readonly dataNeeded = new Map<string, HeapSet<TaskState>>();
  /** Number of tasks in fetch state. */
  fetchCount = 0;
  /** Bytes to gather from one peer in one message (beyond the first task). */
  transferMessageBytesLimit: number;
  /** All and only tasks in missing state. */
  readonly missingDepFlight = new Set<TaskState>();
  /** Tasks coming to us in current transfers (flight, or cancelled/resumed from flight). */
  readonly inFlightTasks = new Set<TaskState>();
  /** `{worker: keys}` of the transfers under way. */
  readonly inFlightWorkers = new Map<string, Set<string>>();
  /** Total size of the transfers under way. */
  transferIncomingBytes = 0;
  /** Maximum number of concurrent incoming transfers. */
  transferIncomingCountLimit: number;
  /** Number of transfers started since the worker started. */
  transferIncomingCountTotal = 0;
  /** Ignore the count limit while fewer bytes than this are in flight. */
  transferIncomingBytesThrottleThreshold = 10_000_000;
  /** Peers that recently answered busy. */
  readonly busyWorkers = new Set<string>();
  /** Decreases with every compute-task; a tie-breaker appended to priorities (LIFO). */
  generation = 0;
  /** Total resources. */
  readonly totalResources: Map<string, number>;
  /** Resources not held by running tasks. */
  readonly availableResources: Map<string, number>;
  /** Running tasks that hold a thread (executing, or cancelled/resumed from executing). */
  readonly executing = new Set<TaskState>();
  /** Running tasks that seceded (long-running, or cancelled/resumed from long-running). */
  readonly longRunning = new Set<TaskState>();
  /** Number of tasks run in this worker's lifetime, failed and cancelled ones included. */
  executedCount = 0;
  /** Total size of the values in memory. */
  nbytes = 0;
  /** Actor tasks. */
  readonly actors = new Map<string, unknown>();
  /** Transition log, capped at 100,000 records. */
  readonly log = new TransitionLog(100_000);
  /** Every stimulus handled, capped at 10,000. */
  readonly stimulusLog = new BoundedDeque<StateMachineEvent>(10_000);
  /** Run the expensive consistency checks. */
  validate: boolean;
  /** Task counts and time per prefix and state. */
  readonly taskCounter: TaskCounter;
  /** Number of transitions so far (a path through released counts twice). */
  transitionCounter = 0;
  /** Raise when the transition counter reaches this; false for never. */
  transitionCounterMax: number | false;
  /** Limit of bytes for incoming transfers. */
  transferIncomingBytesLimit: number;
  /** Seeded random source for tie-breaks. */
  readonly rng: { random(): number };

  /** Injected wall clock (seconds). */
  readonly clock: () => number;
  /**
   * The clock when the current stimulus was handled: the time of its log records. The
   * seed reads the clock for every record; one read per stimulus saves a dozen per task
   * and gives the records of one stimulus one time.
   */
  stimulusTime = 0;
  /** Injected size estimate. */
  readonly sizeof: (value: unknown) => number;
  /** Injected type name. */
  readonly typeName: (value: unknown) => string;
  /** Injected error conversion. */
  readonly errorMessage: (err: unknown) => ErrorMessage;
  private readonly onPluginError: ((name: string, err: unknown) => void) | undefined;
  private readonly chooser: WorkerStateChooser | undefined;
  private readonly hostCache = new Map<string, string>();
  private readonly gatherCandidates = new GatherCandidates();
  /** One shared set of holders per peer (see SharedHolders). */
  private readonly sharedHolders = new Map<string, SharedHolders>();
  /** The tasks transitioned by the current stimulus, with their initial states. */
  private readonly touched = new TouchedTasks();

  constructor(o: WorkerStateOptions = {}) {
    checkWorkerStateOptions(o);
    this.nthreads = o.nthreads ?? 1;
    if (o.address) this._address = o.address;
    this.data = o.data ?? new Map<string, unknown>();
    this.threads = o.threads ?? new Map();
    this.plugins = o.plugins ?? new Map();
    this.totalResources = new Map(toMap(o.resources));
    this.availableResources = new Map(this.totalResources);
    this.validate = o.validate ?? true;
    this.transferIncomingCountLimit = o.transferIncomingCountLimit ?? 9999;
    this.transferMessageBytesLimit = o.transferMessageBytesLimit ?? Number.POSITIVE_INFINITY;
    this.transferIncomingBytesLimit = o.transferIncomingBytesLimit ?? Number.POSITIVE_INFINITY;
    this.transitionCounterMax = o.transitionCounterMax ?? false;
    // Every task passes through one of these: membership as a bit on the task, not a hash lookup.
    this.ready = HeapSet.marked(taskPriority, READY_MARK);
    this.constrained = HeapSet.marked(taskPriority, CONSTRAINED_MARK);
    this.clock = o.clock ?? zeroClock;
    this.taskCounter = new TaskCounter(o.monotonic ?? this.clock);
    this.rng = o.rng ?? new PyRandom(0);
    // Given ones are called so as not to throw (the defaults never do): see safeServices.ts.
    this.sizeof = o.sizeof == null ? defaultSizeof : safeSizeof(o.sizeof);
    this.typeName = o.typeName == null ? defaultTypeName : safeTypeName(o.typeName);
    this.errorMessage = o.errorMessage ?? defaultErrorMessage;
    this.onPluginError = o.onPluginError;
    this.chooser = o.chooser;
    keepWorkerStateShapes(WorkerState);
  }

  /** This worker's address. */
  get address(): string {
    if (this._address === undefined) throw new Error("WorkerState.address has not been set");
    return this._address;
  }
  set address(value: string) {
    this._address = value;
  }

  /**
   * Process one or more external events, transition the tasks they concern to new
   * states, and return the instructions to carry out as a consequence.
   */
  handleStimulus(...stims: StateMachineEvent[]): Instruction[] {
    return this.handleStimuli(stims);
  }

  /**
   * {@link handleStimulus} for an array of stimuli: shells pass what arrived
   * together (tens of thousands at once overflow the stack as spread arguments).
   */
  handleStimuli(stims: readonly StateMachineEvent[]): Instruction[] {
    const out: Instruction[] = [];
    const handled = this.clock();
    this.stimulusTime = handled;
    for (const stim of stims) {
      try {
        if (stim.cls !== "FindMissingEvent") this.stimulusLog.push(stim.toLoggable(handled));
        const recs = handleEvent(this, stim, out);
        this.transitions(recs, stim.stimulusId, out);
      } catch (err) {
        throw this.withContext(err, stim);
      }
    }
    return out;
  }

  /**
   * The seed raises bare AssertionErrors and KeyErrors; the port raises the same
   * classes but says which event failed, and the story of the task it concerns.
   * InvalidTransition and InvalidTaskState already carry their story.
   */
  private withContext(err: unknown, stim: StateMachineEvent): unknown {
    if (!looksLikeEvent(stim)) {
      return new TypeError(
        `handleStimulus: expected a StateMachineEvent (new ComputeTaskEvent({...}), eventFromDict(...), ...), got ${showValue(stim)}`,
        { cause: err },
      );
    }
    if (
      !(err instanceof Error) ||
      err instanceof InvalidTransition ||
      err instanceof InvalidTaskState
    ) {
      return err;
    }
    if ((err as { weftContext?: boolean }).weftContext) return err;
    // A key that is no string (an event changed after its constructor checked it) has no story.
    const eventsKey: unknown = eventKey(stim);
    const key = typeof eventsKey === "string" ? eventsKey : null;
    const peer = "worker" in stim ? `, worker=${showValue(stim.worker, 200)}` : "";
    let context = `\n  while handling ${stim.cls}(stimulus_id=${JSON.stringify(stim.stimulusId)}${
      key !== null ? `, key=${JSON.stringify(key)}` : ""
    }${peer})`;
    if (key !== null) {
      const ts = this.tasks.get(key);
      context +=
        ts === undefined ? `\n  task ${JSON.stringify(key)} is unknown` : `\n  task: ${ts}`;
      const story = this.story(key);
      if (story.length > 0) {
        context += `\n  story:\n${story
          .slice(-20)
          .map((e) => `    ${formatLogEntry(e)}`)
          .join("\n")}`;
      }
    }
    err.message += context;
    Object.defineProperty(err, "weftContext", { value: true });
    return err;
  }

  // ---------------------------------------------------------------- accessors

  /** Number of tasks executing and counting towards `nthreads` (cancelled ones included). */
  get executingCount(): number {
    return this.executing.size;
  }

  /** Tasks occupying a thread, whether or not they count towards `nthreads`. */
  get allRunningTasks(): Set<TaskState> {
    const out = new Set(this.executing);
    for (const ts of this.longRunning) out.add(ts);
    return out;
  }

  /** Number of tasks being replicated from peers. */
  get inFlightTasksCount(): number {
    return this.inFlightTasks.size;
  }

  /** Number of open transfers from peers. */
  get transferIncomingCount(): number {
    return this.inFlightWorkers.size;
  }

  // ---------------------------------------------------------- dict helpers

  /** `self.data_needed[worker]` of the seed's defaultdict: creates an empty heap. */
  dataNeededFor(worker: string): HeapSet<TaskState> {
    let heap = this.dataNeeded.get(worker);
    if (heap === undefined) {
      heap = new HeapSet<TaskState>(taskPriority);
      this.dataNeeded.set(worker, heap);
    }
    return heap;
  }

  /** `self.has_what[worker]` of the seed's defaultdict: creates an empty set. */
  hasWhatFor(worker: string): Set<string> {
    let keys = this.hasWhat.get(worker);
    if (keys === undefined) {
      keys = new Set();
      this.hasWhat.set(worker, keys);
    }
    return keys;
  }

  /** `self.tasks[key]`: throws KeyError when absent. */
  task(key: string): TaskState {
    const ts = this.tasks.get(key);
    if (ts === undefined) throw new KeyError(key);
    return ts;
  }

  // ------------------------------------------------------ shared helpers

  /**
   * The task `key`, made (released) if this worker does not know it, and given
   * `priority` if it has none yet (the seed's `_ensure_task_exists`). For the handlers.
   * @internal
   */
  ensureTaskExists(key: string, priority: Priority, stimulusId: string): TaskState {
    let ts = this.tasks.get(key);
    if (ts === undefined) {
      ts = new TaskState(key);
      this.tasks.set(key, ts);
      this.taskCounter.newTask(ts);
    }
    if (ts.priority === null || ts.priority.length === 0) {
      assert(priority.length > 0);
      ts.priority = priority;
    }
    this.log.add5(key, "ensure-task-exists", ts.state, stimulusId, this.stimulusTime);
    return ts;
  }

  /**
   * Takes the scheduler's `{key: [address, ...]}` as the holders of the known keys,
   * keeping `hasWhat` and the fetch heaps in step (the seed's `_update_who_has`).
   * @internal
   */
  updateWhoHas(whoHas: WhoHas): void {
    for (const [key, workerList] of whoHas) {
      const ts = this.tasks.get(key);
      // The answer to a refresh-who-has may arrive after the key was forgotten.
      if (ts === undefined) continue;
      if (ts.whoHas.size === 0) {
        this.addFirstHolders(ts, workerList);
        continue;
      }
      if (this.holdersUnchanged(ts.whoHas, workerList)) continue;
      const workers = new Set(workerList);
      // The scheduler may believe we hold a key that rebalance() just asked us to
      // release; a release-worker-data message is already on its way.
      workers.delete(this.address);

      if (setsEqual(ts.whoHas, workers)) continue;

      for (const worker of ts.whoHas) {
        if (workers.has(worker)) continue;
        setRemove(this.hasWhatFor(worker), key);
        if (ts.state === "fetch") this.dataNeededFor(worker).remove(ts);
      }
      for (const worker of workers) {
        if (ts.whoHas.has(worker)) continue;
        this.hasWhatFor(worker).add(key);
        if (ts.state === "fetch") this.dataNeededFor(worker).add(ts);
      }
      ts.whoHas = workers;
    }
  }

  /**
   * `updateWhoHas` for a task with no known holder (most often an input just made by
   * compute-task): nothing to compare or remove, so the holders' set is built
   * directly, and only when some holder other than this worker is listed.
   */
  private addFirstHolders(ts: TaskState, workerList: readonly string[]): void {
    // Read first: it throws while the address is unset, as the general path does.
    const self = this.address;
    let first: string | null = null;
    let several = false;
    for (let i = 0; i < workerList.length; i++) {
      const w = workerList[i];
      if (w === self || w === first) continue;
      if (first === null) {
        first = w;
      } else {
        several = true;
        break;
      }
    }
    // set(workerList) - {address} is empty: equal to who_has.
    if (first === null) return;
    let workers: Set<string>;
    if (several) {
      workers = new Set<string>();
      for (let i = 0; i < workerList.length; i++) {
        if (workerList[i] !== self) workers.add(workerList[i]);
      }
    } else {
      workers = this.sharedHoldersOf(first);
    }
    const key = ts.key;
    const fetching = ts.state === "fetch";
    for (const worker of workers) {
      this.hasWhatFor(worker).add(key);
      if (fetching) this.dataNeededFor(worker).add(ts);
    }
    ts.whoHas = workers;
  }

  /** The shared set of holders `{worker}` (see SharedHolders). */
  private sharedHoldersOf(worker: string): Set<string> {
    let shared = this.sharedHolders.get(worker);
    if (shared === undefined) {
      // Bounded like hostCache: a worker that has seen many peers come and go starts
      // afresh; tasks keep the sets they have.
      if (this.sharedHolders.size >= 10_000) this.sharedHolders.clear();
      shared = new SharedHolders(worker);
      this.sharedHolders.set(worker, shared);
    }
    return shared;
  }

  /**
   * Whether `set(workerList) - {address}` equals `whoHas`, decided without building the
   * set in the common case (a short list of peers, possibly naming this worker, as
   * for inputs held here). False means "maybe not": the caller then compares the sets.
   */
  private holdersUnchanged(whoHas: ReadonlySet<string>, workerList: readonly string[]): boolean {
    const n = workerList.length;
    const self = this._address;
    if (n > 8 || self === undefined) return false;
    // Every other worker listed is in whoHas, and as many distinct ones as whoHas holds.
    let distinct = 0;
    outer: for (let i = 0; i < n; i++) {
      const w = workerList[i];
      if (w === self) continue;
      if (!whoHas.has(w)) return false;
      for (let j = 0; j < i; j++) if (workerList[j] === w) continue outer;
      distinct++;
    }
    return distinct === whoHas.size;
  }

  /** Reset a task's attributes and forget it in every worker-level collection. Idempotent. */
  purgeState(ts: TaskState): void {
    const key = ts.key;
    // Not data.pop(key): a spilling store would read the value back from disk.
    if (this.data.has(key)) this.data.delete(key);
    // Most of these collections are empty for most tasks: a size check is cheaper than
    // hashing the key or the task for nothing.
    if (this.actors.size > 0) this.actors.delete(key);
    if (this.threads.size > 0) this.threads.delete(key);

    if (ts.whoHas.size > 0) {
      for (const worker of ts.whoHas) {
        this.hasWhatFor(worker).delete(key);
        this.dataNeededFor(worker).discard(ts);
      }
      ts.whoHas = NO_WORKERS;
    }

    // Emptied sets go back to the shared empty ones: clearing or emptying a Set
    // reallocates its table.
    if (ts.dependencies.size > 0) {
      for (const d of ts.dependencies) d.waiters = withoutTask(d.waiters, ts);
    }
    ts.waitingForData = NO_TASKS;
    ts.nbytes = null;
    ts.previous = null;
    ts.next = null;
    ts.done = false;
    ts.comingFrom = null;
    ts.exception = null;
    ts.traceback = null;
    // The seed resets traceback_text twice and never exception_text; so does the port.
    ts.tracebackText = "";

    if (this.missingDepFlight.size > 0) this.missingDepFlight.delete(ts);
    if (this.ready.size > 0) this.ready.discard(ts);
    if (this.constrained.size > 0) this.constrained.discard(ts);
    if (this.executing.size > 0) this.executing.delete(ts);
    if (this.longRunning.size > 0) this.longRunning.delete(ts);
    if (this.inFlightTasks.size > 0) this.inFlightTasks.delete(ts);
    if (this.waiting.size > 0) this.waiting.delete(ts);
  }

  /** Whether to hold back new incoming transfers. */
  shouldThrottleIncomingTransfers(): boolean {
    const reachedCountLimit = this.inFlightWorkers.size >= this.transferIncomingCountLimit;
    const reachedThrottleThreshold =
      this.transferIncomingBytes >= this.transferIncomingBytesThrottleThreshold;
    const reachedBytesLimit = this.transferIncomingBytes >= this.transferIncomingBytesLimit;
    return (reachedCountLimit && reachedThrottleThreshold) || reachedBytesLimit;
  }

  /** Transition tasks from fetch to flight until none are left or a limit is reached. */
  private ensureCommunicating(stimulusId: string, out: Instruction[]): Recs | null {
    if (!this.running || this.dataNeeded.size === 0) return null;
    if (this.shouldThrottleIncomingTransfers()) return null;

    let recs: Recs | null = null;
    const candidates = this.selectWorkersForGather();
    try {
      // The seed's generator _select_workers_for_gather, inlined: an entry whose task
      // count changed since it was pushed (_select_keys_for_gather took tasks also
      // replicated on a higher-priority peer) goes back with its new order. A `break`
      // below is the consumer's break, which closes the seed's generator before its
      // code after the yield runs.
      while (candidates.size > 0) {
        const c = candidates.pop();
        const availableTasks = c.tasks;
        const worker = c.worker;
        if (availableTasks.size === 0) {
          deleteOrThrow(this.dataNeeded, worker);
          continue;
        }
        if (-c.ntasksNeg !== availableTasks.size) {
          c.priority = availableTasks.peek().priority as Priority;
          c.ntasksNeg = -availableTasks.size;
          candidates.push(c);
          continue;
        }

        assert(worker !== this.address);
        const toGatherTasks = this.selectKeysForGather(availableTasks);
        const messageNbytes = this.lastMessageNbytes;
        // We always load at least one task...
        assert(toGatherTasks.length > 0 || this.transferIncomingBytes);
        // ...but that task might have been selected in a previous iteration.
        if (toGatherTasks.length === 0) break;

        const toGatherKeys = new Set<string>();
        for (const ts of toGatherTasks) toGatherKeys.add(ts.key);
        this.log.add5("gather-dependencies", worker, toGatherKeys, stimulusId, this.stimulusTime);

        if (recs === null) recs = new Recs();
        for (const ts of toGatherTasks) {
          if (this.validate) {
            assert(ts.state === "fetch");
            assert(ts.whoHas.has(worker));
            assert(!recs.has(ts));
          }
          recs.set(ts, ["flight", worker]);
        }
        // One GatherDep per peer per call; a peer in flight is not asked again until
        // its transfer completes.
        out.push(new GatherDep(worker, toGatherKeys, messageNbytes, stimulusId));
        this.inFlightWorkers.set(worker, toGatherKeys);
        this.transferIncomingCountTotal += 1;
        this.transferIncomingBytes += messageNbytes;
        if (this.shouldThrottleIncomingTransfers()) break;

        if (availableTasks.size === 0) deleteOrThrow(this.dataNeeded, worker);
      }
    } finally {
      candidates.clear();
    }
    return recs;
  }

  private hostOf(address: string): string {
    let host = this.hostCache.get(address);
    if (host === undefined) {
      host = getAddressHost(address);
      if (this.hostCache.size > 100_000) this.hostCache.clear();
      this.hostCache.set(address, host);
    }
    return host;
  }

  /**
   * The peers to gather from with their tasks in data_needed, as a heap ordered by:
   * highest-priority task; then local peers before remote ones; then most tasks
   * available; then a seeded random tie-break. Busy and in-flight peers are skipped;
   * peers with no tasks left are dropped from data_needed.
   */
  private selectWorkersForGather(): GatherCandidates {
    const host = this.hostOf(this.address);
    const candidates = this.gatherCandidates;
    // The seed iterates a copy (list(data_needed.items())) because it deletes entries on
    // the way; a JS Map tolerates deleting the entry being visited, and nothing is added
    // during the loop, so the live Map gives the same sequence without the copy.
    for (const [worker, tasks] of this.dataNeeded) {
      if (tasks.size === 0) {
        this.dataNeeded.delete(worker);
        continue;
      }
      if (this.inFlightWorkers.has(worker) || this.busyWorkers.has(worker)) continue;
      candidates.add(
        tasks.peek().priority as Priority,
        this.hostOf(worker) !== host,
        -tasks.size,
        this.chooser === undefined
          ? this.rng.random()
          : this.chooser.gatherTieBreak(worker, this.rng.random()),
        worker,
        tasks,
      );
    }
    candidates.heapify();
    return candidates;
  }

  /** Total bytes of the last selectKeysForGather. */
  private lastMessageNbytes = 0;

  /**
   * All tasks replicated on this peer that fit in one message, up to the message and
   * incoming byte limits.
   */
  private selectKeysForGather(available: HeapSet<TaskState>): TaskState[] {
    const toGather: TaskState[] = [];
    let messageNbytes = 0;
    while (available.size > 0) {
      const ts = available.peek();
      if (this.taskExceedsTransferLimits(ts, messageNbytes)) break;
      // This also pops ts from available.
      for (const worker of ts.whoHas) this.dataNeededFor(worker).remove(ts);
      toGather.push(ts);
      messageNbytes += ts.getNbytes();
    }
    this.lastMessageNbytes = messageNbytes;
    return toGather;
  }

  /** Would gathering this task exceed the transfer limits? */
  private taskExceedsTransferLimits(ts: TaskState, messageNbytes: number): boolean {
    // With no other traffic, the top-priority task goes whatever its size, for progress.
    if (this.transferIncomingBytes === 0 && messageNbytes === 0) return false;
    let allowance = this.transferIncomingBytesLimit - this.transferIncomingBytes;
    // The message limit is ignored for the first task of a message, for progress.
    if (messageNbytes !== 0) {
      allowance = Math.min(allowance, this.transferMessageBytesLimit) - messageNbytes;
    }
    return ts.getNbytes() > allowance;
  }

  /** Start ready tasks while threads are free. @internal */
  ensureComputing(): Recs | null {
    if (!this.running) return null;
    let recs: Recs | null = null;
    while (this.executing.size < this.nthreads) {
      const ts = this.nextReadyTask();
      if (ts === null) break;
      if (this.validate) {
        assert(READY.has(ts.state));
        assert(recs === null || !recs.has(ts));
      }
      if (recs === null) recs = Recs.of(ts, "executing");
      else recs.set(ts, "executing");
      this.acquireResources(ts);
      this.executing.add(ts);
    }
    return recs;
  }

  /** Pop the top-priority task from ready or constrained. */
  private nextReadyTask(): TaskState | null {
    const ready = this.ready;
    const constrained = this.constrained;
    if (ready.size > 0 && constrained.size > 0) {
      const tsr = ready.peek();
      const tsc = constrained.peek();
      assert(tsr.priority);
      assert(tsc.priority);
      if (
        comparePriority(tsc.priority, tsr.priority) < 0 &&
        this.resourceRestrictionsSatisfied(tsc)
      ) {
        return constrained.pop();
      }
      return ready.pop();
    }
    if (ready.size > 0) return ready.pop();
    if (constrained.size > 0) {
      const tsc = constrained.peek();
      if (this.resourceRestrictionsSatisfied(tsc)) return constrained.pop();
    }
    return null;
  }

  /**
   * The `task-finished` message for `ts`, in memory after run `runId`
   * (the seed's `_get_task_finished_msg`).
   * @internal
   */
  getTaskFinishedMsg(ts: TaskState, runId: number, stimulusId: string): TaskFinishedMsg {
    if (this.validate) {
      assert(ts.state === "memory");
      assert(this.data.has(ts.key) || this.actors.has(ts.key));
      assert(ts.type !== null);
      assert(ts.nbytes !== null);
    }
    return new TaskFinishedMsg(
      ts.key,
      runId,
      ts.nbytes,
      ts.type,
      ts.type ?? "NoneType",
      ts.metadata,
      this.threads.get(ts.key) ?? null,
      ts.startstops,
      stimulusId,
    );
  }

  /**
   * The seed's KeyError for a restriction on a resource this worker does not have
   * (`available_resources[resource]`), saying which task asked for it and what there is.
   */
  private unknownResource(ts: TaskState, resource: string): KeyError {
    const have = [...this.totalResources.keys()].map((r) => JSON.stringify(r)).join(", ");
    return new KeyError(
      resource,
      `${JSON.stringify(resource)} (task ${JSON.stringify(ts.key)} is restricted to a resource this worker does not have; it has ${have === "" ? "none" : have})`,
    );
  }

  /**
   * Whether enough of each resource `ts` is restricted to is free now (the seed's
   * `_resource_restrictions_satisfied`); throws a KeyError for a resource this worker does not
   * have.
   */
  resourceRestrictionsSatisfied(ts: TaskState): boolean {
    if (ts.resourceRestrictions.size === 0) return true;
    for (const [resource, needed] of ts.resourceRestrictions) {
      const available = this.availableResources.get(resource);
      if (available === undefined) throw this.unknownResource(ts, resource);
      if (!(available >= needed)) return false;
    }
    return true;
  }

  /**
   * Takes the resources `ts` is restricted to out of `availableResources` as it starts
   * (the seed's `_acquire_resources`).
   * @internal
   */
  acquireResources(ts: TaskState): void {
    if (ts.resourceRestrictions.size === 0) return;
    for (const [resource, needed] of ts.resourceRestrictions) {
      const available = this.availableResources.get(resource);
      if (available === undefined) throw this.unknownResource(ts, resource);
      this.availableResources.set(resource, available - needed);
    }
  }

  /**
   * Gives back the resources `ts` took as it stops (the seed's `_release_resources`).
   * @internal
   */
  releaseResources(ts: TaskState): void {
    if (ts.resourceRestrictions.size === 0) return;
    for (const [resource, needed] of ts.resourceRestrictions) {
      const available = this.availableResources.get(resource);
      if (available === undefined) throw this.unknownResource(ts, resource);
      this.availableResources.set(resource, available + needed);
    }
  }

  // ---------------------------------------------------------- transitions

  private notifyPlugins(key: string, start: TaskStateState, finish: TaskStateState): void {
    for (const [name, plugin] of this.plugins) {
      if (typeof plugin.transition !== "function") continue;
      // An async hook's rejection, dropped, was the process's unhandled rejection.
      callGuarded(
        () => plugin.transition?.(key, start, finish),
        (err) => this.onPluginError?.(name, err),
      );
    }
  }

  /**
   * Transition a task from its current state to `finish`, through `released` when the
   * table has no direct entry. Instructions go to `out`; returns the recommendations.
   * @internal
   */
  transition(ts: TaskState, finish: Finish, stimulusId: string, out: Instruction[]): Recs | null {
    const target = finishState(finish);
    if (ts.state === target) return null;
    const start = ts.state;
    const entry = lookupTransition(start, target);

    // A path through released counts twice. The counter increases before the
    // transition runs, so that it catches infinite recursions.
    this.transitionCounter += 1;
    if (this.transitionCounterMax !== false && this.transitionCounterMax !== 0) {
      if (this.transitionCounter >= this.transitionCounterMax) {
        throw new TransitionCounterMaxExceeded(ts.key, start, target, this.story(ts));
      }
    }

    let recs: Recs | null;
    if (entry !== undefined) {
      const nargs = typeof finish === "string" ? 0 : finish.length - 1;
      if (entry.arity >= 0 && nargs !== entry.arity) {
        throw new PyTypeError(
          `transition ${start}->${target} of ${ts.key} takes ${entry.arity} arguments, got ${nargs}`,
        );
      }
      recs = entry.fn(this, ts, finish, stimulusId, out);
      if (this.plugins.size > 0) this.notifyPlugins(ts.key, start, target);
    } else if (start !== "released" && target !== "released") {
      // start -> released -> finish
      try {
        const viaReleased = this.transition(ts, "released", stimulusId, out);
        recs = viaReleased === null ? new Recs() : viaReleased.copy();
        for (let v = recs.delete(ts); v !== undefined; v = recs.delete(ts)) {
          // The purpose of this path is to get to finish, not to forget.
          if (finishState(v) === "forgotten") continue;
          mergeRecs(recs, this.transition(ts, v, stimulusId, out));
        }
        mergeRecs(recs, this.transition(ts, finish, stimulusId, out));
      } catch (err) {
        if (err instanceof InvalidTransition || err instanceof RecommendationsConflict) {
          throw new InvalidTransition(ts.key, start, target, this.story(ts), { cause: err });
        }
        throw err;
      }
    } else {
      throw new InvalidTransition(ts.key, start, target, this.story(ts));
    }

    if (recs !== null && recs.size === 1) {
      const rec = recs.lastTask() as TaskState;
      const recState = finishState(recs.get(rec) as Finish);
      this.log.addTransition1(
        ts.key,
        start,
        target,
        ts.state,
        rec.key,
        recState,
        stimulusId,
        this.stimulusTime,
      );
    } else {
      this.log.addTransition(
        ts.key,
        start,
        target,
        ts.state,
        logRecs(recs),
        stimulusId,
        this.stimulusTime,
      );
    }
    return recs;
  }

  /** Process transitions until none are left, then start transfers. */
  private transitions(recs: Recs | null, stimulusId: string, out: Instruction[]): void {
    const touched = this.touched;
    touched.begin();
    if (recs !== null) this.processRecs(recs, stimulusId, out);
    // Called once all tasks have reached fetch, so that GatherDep aggregates as many
    // keys per peer as it can (dask/distributed#6497).
    const commRecs = this.ensureCommunicating(stimulusId, out);
    if (commRecs !== null) this.processRecs(commRecs, stimulusId, out);

    this.taskCounter.transitions(touched.tasks, touched.states, touched.length);

    if (this.validate) {
      // Full state validation is too expensive to run here.
      for (let i = 0; i < touched.length; i++) validateTask(this, touched.tasks[i]);
    }
    touched.end();
  }

  private processRecs(recs: Recs, stimulusId: string, out: Instruction[]): void {
    const touched = this.touched;
    while (recs.size > 0) {
      let ts = recs.lastTask() as TaskState;
      if (this.chooser !== undefined) ts = this.chosenRecommendation(recs, ts);
      const finish = recs.popLast();
      touched.touch(ts);
      recs.update(this.transition(ts, finish, stimulusId, out));
    }
  }

  /** The chooser's pick among `recs` (default: `last`), moved to the end for `popLast`. */
  private chosenRecommendation(recs: Recs, last: TaskState): TaskState {
    const ts = (this.chooser as WorkerStateChooser).nextRecommendation(recs);
    if (ts === null || ts === last) return last;
    const finish = recs.delete(ts);
    if (finish === undefined) {
      throw new Error(`WorkerStateChooser picked ${ts.key}, which is not recommended`);
    }
    recs.set(ts, finish);
    return ts;
  }

  // ---------------------------------------------------------- diagnostics

  /** All log records involving one or more tasks or stimulus ids. */
  story(...keysOrTasksOrStimuli: (string | TaskState)[]): LogEntry[] {
    return workerStory(storyKeys(keysOrTasksOrStimuli), this.log);
  }

  /** All stimuli involving one or more tasks. */
  stimulusStory(...keysOrTasks: (string | TaskState)[]): StateMachineEvent[] {
    const keys = storyKeys(keysOrTasks);
    const out: StateMachineEvent[] = [];
    for (const ev of this.stimulusLog) {
      const key = eventKey(ev);
      if (key !== null && keys.has(key)) out.push(ev);
    }
    return out;
  }

  /** The state as the seed's `_to_dict`, for debugging and dumps (see toDict.ts). */
  toDict(exclude: readonly string[] = []): { [key: string]: DebugValue } {
    return workerStateToDict(this, exclude);
  }

  /** Check one task's invariants; throws InvalidTaskState with its story. */
  validateTask(ts: TaskState): void {
    validateTask(this, ts);
  }

  /** Check the whole machine's invariants; throws on the first one broken. */
  validateState(options?: ValidateStateOptions): void {
    validateState(this, options);
  }
}

/**
 * The keys a story is asked for. As the seed (`e.key if isinstance(e, TaskState) else
 * e`), anything but a task is taken as a key: `null` or a number matches nothing.
 */
function storyKeys(keysOrTasks: readonly (string | TaskState)[]): Set<string> {
  const keys = new Set<string>();
  for (const e of keysOrTasks) {
    keys.add(typeof e === "object" && e !== null ? e.key : (e as string));
  }
  return keys;
}

/**
 * Whether `stim` is an event at all, for the error a stimulus that is not one gets
 * (`null`, a plain `{cls: "PauseEvent"}`). Duck-typed: an event of another copy of
 * this module is one.
 */
function looksLikeEvent(stim: unknown): boolean {
  if (typeof stim !== "object" || stim === null) return false;
  const ev = stim as Partial<StateMachineEvent>;
  return (
    typeof ev.cls === "string" &&
    typeof ev.stimulusId === "string" &&
    typeof ev.toLoggable === "function"
  );
}

/** Merge `extra` into `recs`, refusing different finishes for one task. */
function mergeRecs(recs: Recs, extra: Recs | null): void {
  if (extra === null) return;
  extra.forEach((finish, ts) => {
    const prev = recs.get(ts);
    if (prev !== undefined && !sameFinish(prev, finish)) {
      throw new RecommendationsConflict(
        `Mismatched recommendations for ${ts.key}: ${String(prev)} vs. ${String(finish)}`,
      );
    }
    recs.set(ts, finish);
  });
}

/**
 * The log's copy of a transition's recommendations. The log keeps it for 100,000
 * transitions, so it is made as small as it can be: one recommendation without an
 * array, more in an array of the exact size.
 */
function logRecs(recs: Recs | null): LoggedRecs {
  if (recs === null) return NO_RECS;
  const n = recs.size;
  if (n === 0) return NO_RECS;
  if (n === 1) {
    let one: LoggedRecs = NO_RECS;
    recs.forEach((finish, ts) => {
      one = new LoggedRecs(ts.key, finishState(finish));
    });
    return one;
  }
  const flat = new Array<string>(2 * n);
  let i = 0;
  recs.forEach((finish, ts) => {
    flat[i++] = ts.key;
    flat[i++] = finishState(finish);
  });
  return new LoggedRecs(null, null, flat);
}

function setsEqual<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

function deleteOrThrow<K, V>(map: Map<K, V>, key: K): void {
  if (!map.delete(key)) throw new KeyError(key);
}
