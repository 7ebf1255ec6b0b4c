/**
 * Messages between the scheduler and its workers, with Dask's `op` names and
 * camelCase fields. Every message names its kind in `op` and carries the
 * `stimulusId` of the stimulus that caused it (Dask's `stimulus_id`); those two
 * fields have no doc of their own.
 *
 * The worker's side of this protocol is the worker state machine
 * (`src/worker/state`): scheduler→worker messages become its events
 * (`ComputeTaskEvent`, `FreeKeysEvent`, …) and its `SendMessageToScheduler`
 * instructions (`TaskFinishedMsg`, `TaskErredMsg`, …) become the
 * worker→scheduler messages below.
 */

import type { Priority } from "../util/priority.ts";
import type { StartStop, TaskStateState } from "../worker/state/taskState.ts";
import type { Key, TaskSpec } from "./messagesTaskSpec.ts";

/**
 * `{key: [worker address, ...]}`: where replicas of each key are held. A `Map`
 * (it crosses TCP as one): keyed by task keys, which a plain object would
 * intern and keep in a dictionary of its own for every message.
 */
export type WhoHas = ReadonlyMap<Key, readonly string[]>;

/** `{key: size in bytes}`, a `Map` as {@link WhoHas}. */
export type NBytes = ReadonlyMap<Key, number>;

/** `{resource name: amount}`, e.g. `{GPU: 1}`. */
export type Resources = Readonly<Record<string, number>>;

// ---------------------------------------------------------------------------
// scheduler → worker
// ---------------------------------------------------------------------------

/** Run a task (Dask's `compute-task`; the worker's `ComputeTaskEvent`). */
export interface ComputeTaskMsg {
  readonly op: "compute-task";
  /** The task's key. */
  readonly key: Key;
  /** Unique per `compute-task` sent; results reporting another run id are stale. */
  readonly runId: number;
  /** Where each dependency is held. Keys are exactly the task's dependencies. */
  readonly whoHas: WhoHas;
  /** The size of each dependency. Same keys as `whoHas`. */
  readonly nbytes: NBytes;
  /** The scheduler's priority tuple (user priority, generation, graph order); lower runs first. */
  readonly priority: Priority;
  /** Expected run time in seconds. */
  readonly duration: number;
  /** What to run; null when the scheduler has none (it knows the key only by name). */
  readonly runSpec: TaskSpec | null;
  /** `{resource: amount}` the task holds while it runs; empty if unrestricted. */
  readonly resourceRestrictions: Resources;
  /** The task makes an actor: its result is an object that stays on the worker. */
  readonly actor: boolean;
  /** The task's annotations, as the client gave them. */
  readonly annotations: Readonly<Record<string, unknown>>;
  /** Dask's span ID (`distributed.spans`); weft has no spans and sends null. */
  readonly spanId: string | null;
  readonly stimulusId: string;
}

/** The scheduler no longer needs these keys from this worker (Dask's `free-keys`). */
export interface FreeKeysMsg {
  readonly op: "free-keys";
  /** The keys to release. */
  readonly keys: readonly Key[];
  readonly stimulusId: string;
}

/** Fetch replicas of these keys from peers, for housekeeping (Dask's `acquire-replicas`). */
export interface AcquireReplicasMsg {
  readonly op: "acquire-replicas";
  /** Where each key to fetch is held. */
  readonly whoHas: WhoHas;
  /** The size of each key to fetch, in bytes. Same keys as `whoHas`. */
  readonly nbytes: NBytes;
  readonly stimulusId: string;
}

/** Drop these replicas if they are only held in memory (Dask's `remove-replicas`). */
export interface RemoveReplicasMsg {
  readonly op: "remove-replicas";
  /** The keys whose replica to drop. */
  readonly keys: readonly Key[];
  readonly stimulusId: string;
}

/** Answer to `request-refresh-who-has` (Dask's `refresh-who-has`). */
export interface RefreshWhoHasMsg {
  readonly op: "refresh-who-has";
  /** Where each key asked about is held now; an empty list when nowhere. */
  readonly whoHas: WhoHas;
  readonly stimulusId: string;
}

/** Give up a task that has not started, because it will run elsewhere (Dask's `steal-request`). */
export interface StealRequestMsg {
  readonly op: "steal-request";
  /** The task to give up. */
  readonly key: Key;
  readonly stimulusId: string;
}

/** A peer left the cluster: forget its replicas (Dask's `remove-worker`). */
export interface RemoveWorkerMsg {
  readonly op: "remove-worker";
  /** The address of the peer that left. */
  readonly worker: string;
  readonly stimulusId: string;
}

/**
 * Stop starting tasks and transfers (the worker's `PauseEvent`). The scheduler
 * state machine sends it to a worker it retires, so that it starts nothing new
 * while its data moves.
 */
export interface PauseMsg {
  readonly op: "pause";
  readonly stimulusId: string;
}

/** Resume after `pause` (the worker's `UnpauseEvent`): sent to a worker whose retirement failed. */
export interface UnpauseMsg {
  readonly op: "unpause";
  readonly stimulusId: string;
}

/**
 * Close: the worker was retired (its data is held elsewhere, and the scheduler
 * has removed it), or the cluster restarts. Not an event of the worker's
 * state machine: the worker shell closes itself, as on a `close()` call,
 * without a fault.
 */
export interface CloseWorkerMsg {
  readonly op: "close-worker";
  /** Why, for the worker's log (e.g. "retired"). */
  readonly reason: string;
  /** The cluster restarts (`restart`): a worker with a nanny is started again by it. */
  readonly restart?: boolean;
  readonly stimulusId: string;
}

/** Every message the scheduler sends to a worker. */
export type SchedulerToWorkerMessage =
  | ComputeTaskMsg
  | FreeKeysMsg
  | AcquireReplicasMsg
  | RemoveReplicasMsg
  | RefreshWhoHasMsg
  | StealRequestMsg
  | RemoveWorkerMsg
  | PauseMsg
  | UnpauseMsg
  | CloseWorkerMsg;

// ---------------------------------------------------------------------------
// worker → scheduler
// ---------------------------------------------------------------------------

/** A worker joins the cluster (Dask's `register-worker`). */
export interface RegisterWorkerMsg {
  readonly op: "register-worker";
  /** The worker's address; must be unique among connected workers. */
  readonly address: string;
  /** Size of its thread pool; a positive integer. */
  readonly nthreads: number;
  /** `{resource: amount}` it supplies. */
  readonly resources: Resources;
  /** Its `memoryLimit` in bytes (it spills beyond a share of it), if it has one. */
  readonly memoryLimit?: number;
  /**
   * A nanny (a `weft worker --nanny` process, a `LocalCluster`) starts another
   * worker in its place when the cluster restarts. Default false.
   */
  readonly nanny?: boolean;
  /**
   * A name of its own (Dask's `--name`), unique among the connected workers:
   * `workers` restrictions and requests may give it in place of its address.
   */
  readonly name?: string;
  readonly stimulusId: string;
}

/** A worker is alive (Dask's `heartbeat_worker`). */
export interface HeartbeatWorkerMsg {
  readonly op: "heartbeat-worker";
  /** With a `memoryLimit`: the values the worker has spilled to disk, and their bytes. */
  readonly spilled?: SpilledValues;
  /** With a memory monitor: the memory it last measured (its `memoryMeasure`), in bytes. */
  readonly memory?: number;
  readonly stimulusId: string;
}

/** Values a worker keeps on disk rather than in memory, and their bytes (as measured in memory). */
export interface SpilledValues {
  /** How many values are on disk. */
  readonly keys: number;
  /** Their size in bytes, as measured in memory before they were spilled. */
  readonly bytes: number;
}

/** A worker paused or resumed, e.g. under memory pressure (Dask's `worker-status-change`). */
export interface WorkerStatusChangeMsg {
  readonly op: "worker-status-change";
  /** Its new status: `paused` (it starts no task or transfer) or `running` again. */
  readonly status: "running" | "paused";
  readonly stimulusId: string;
}

/** A task ran successfully and its result is in the worker's memory (Dask's `task-finished`). */
export interface TaskFinishedMsg {
  readonly op: "task-finished";
  /** The task that finished. */
  readonly key: Key;
  /** The `runId` of the `compute-task` that ran. */
  readonly runId: number;
  /** Size of the result in bytes, if known. */
  readonly nbytes: number | null;
  /** The result's type name. */
  readonly typename: string;
  /** Timings; `compute` entries feed the scheduler's duration estimates. */
  readonly startstops?: readonly StartStop[];
  /** The task's metadata (Dask's `TaskState.metadata`), as worker plugins set it. */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** The ID of the thread that ran the task, if known. */
  readonly thread?: number | null;
  readonly stimulusId: string;
}

/** A task raised (Dask's `task-erred`). */
export interface TaskErredMsg {
  readonly op: "task-erred";
  /** The task that raised. */
  readonly key: Key;
  /** The `runId` of the `compute-task` that ran. */
  readonly runId: number;
  /** The error itself, opaque to the scheduler and passed on to clients. */
  readonly exception: unknown;
  /** Opaque traceback, if any. */
  readonly traceback?: unknown;
  /** The error as text (Dask's `exception_text`). */
  readonly exceptionText: string;
  /** The traceback as text (Dask's `traceback_text`); may be empty. */
  readonly tracebackText: string;
  /** Timings of the run (wall-clock seconds), as in `task-finished`. */
  readonly startstops?: readonly StartStop[];
  /** The ID of the thread that ran the task, if known. */
  readonly thread?: number | null;
  /**
   * True when the worker's copy erred because fetching it from a peer failed
   * (a `GatherDepFailureEvent`), not because a run of it did: weft's scheduler
   * then fails the tasks there that needed it (dask/distributed#7060). A weft
   * extension; absent from Dask's message.
   */
  readonly fetchFailed?: boolean;
  readonly stimulusId: string;
}

/** The worker holds replicas of these keys, e.g. fetched from peers (Dask's `add-keys`). */
export interface AddKeysMsg {
  readonly op: "add-keys";
  /** The keys it now holds. */
  readonly keys: readonly Key[];
  readonly stimulusId: string;
}

/** The worker dropped its replica of a key (Dask's `release-worker-data`). */
export interface ReleaseWorkerDataMsg {
  readonly op: "release-worker-data";
  /** The key whose replica it dropped. */
  readonly key: Key;
  readonly stimulusId: string;
}

/** The task asked to run elsewhere (Dask's `reschedule`, from the `Reschedule` exception). */
export interface RescheduleMsg {
  readonly op: "reschedule";
  /** The task to run elsewhere. */
  readonly key: Key;
  readonly stimulusId: string;
}

/** The task seceded from the thread pool (Dask's `long-running`). */
export interface LongRunningMsg {
  readonly op: "long-running";
  /** The task that seceded. */
  readonly key: Key;
  /** How long it had run before seceding, in seconds, if known. */
  readonly computeDuration: number | null;
  /** The run it concerns; a mismatch makes the message stale. Optional, as in the seed. */
  readonly runId?: number;
  readonly stimulusId: string;
}

/** The worker cannot find these keys anywhere it knows of (Dask's `request-refresh-who-has`). */
export interface RequestRefreshWhoHasMsg {
  readonly op: "request-refresh-who-has";
  /** The keys whose holders it asks for. */
  readonly keys: readonly Key[];
  readonly stimulusId: string;
}

/** Answer to `steal-request`: the task's state on the victim, or null if unknown (Dask's `steal-response`). */
export interface StealResponseMsg {
  readonly op: "steal-response";
  /** The task the steal request was about. */
  readonly key: Key;
  /** The task's state on the worker, or null if it does not know the task. */
  readonly state: TaskStateState | null;
  readonly stimulusId: string;
}

/** Every message a worker sends to the scheduler. */
export type WorkerToSchedulerMessage =
  | RegisterWorkerMsg
  | HeartbeatWorkerMsg
  | WorkerStatusChangeMsg
  | TaskFinishedMsg
  | TaskErredMsg
  | AddKeysMsg
  | ReleaseWorkerDataMsg
  | RescheduleMsg
  | LongRunningMsg
  | RequestRefreshWhoHasMsg
  | StealResponseMsg;

/** The `op` of every worker→scheduler message. */
export type WorkerToSchedulerOp = WorkerToSchedulerMessage["op"];

/** The `op` of every scheduler→worker message. */
export type SchedulerToWorkerOp = SchedulerToWorkerMessage["op"];

// ---------------------------------------------------------------------------
// CPU profiles a client started on a worker: the servers', not the state machines'
// ---------------------------------------------------------------------------

/**
 * Worker → scheduler: profile `id` started on this worker (`profile_start`, which a
 * client calls on the worker directly) for client `client`. Without a stimulus id:
 * no state machine sees it.
 */
export interface ProfileStartedMsg {
  readonly op: "profile-started";
  readonly id: string;
  readonly client: string;
}

/** Worker → scheduler: profile `id` is no longer kept on this worker (fetched, expired, discarded). */
export interface ProfileEndedMsg {
  readonly op: "profile-ended";
  readonly id: string;
}

/**
 * Scheduler → worker: drop profile `id`, its profiles lost: the client that started
 * it is gone for good (removed), and would have left it running until its `maxMs`.
 */
export interface ProfileDiscardMsg {
  readonly op: "profile-discard";
  readonly id: string;
}
