/**
 * Messages between clients and the scheduler, with Dask's `op` names and
 * camelCase fields. Each message names its kind in `op` and carries the
 * `stimulusId` of the stimulus that caused it (Dask's `stimulus_id`);
 * client→scheduler messages name their client in `clientId`. (Those three fields
 * have no doc of their own.)
 */

import type { Key, TaskSpec } from "./messagesTaskSpec.ts";
import type { Resources } from "./messagesWorker.ts";

// ---------------------------------------------------------------------------
// client → scheduler
// ---------------------------------------------------------------------------

/** One task of an `update-graph`. */
export interface GraphTask {
  /** What the task runs: its function and arguments. */
  readonly spec: TaskSpec;
  /**
   * Keys of the tasks whose results this task needs. Each is either in the same
   * `update-graph` or already known to the scheduler, and every {@link TaskRef}
   * in `spec.args` must be listed.
   */
  readonly dependencies: readonly Key[];
  /** User priority: higher runs earlier (Dask's `priority=`). Default 0. */
  readonly priority?: number;
  /** How many times to re-run the task after it raises. Default 0. */
  readonly retries?: number;
  /** `{resource: amount}` a worker must supply to run it. */
  readonly resources?: Resources;
  /**
   * The workers that may run it: addresses (`tcp://10.0.0.1:4000`) or hosts
   * (`10.0.0.1`: any worker there), as Dask's `workers=`.
   */
  readonly workers?: readonly string[];
  /** With `workers`: run elsewhere when none of them can (Dask's `allow_other_workers`). */
  readonly allowOtherWorkers?: boolean;
  /**
   * The task's result is an actor (Dask's `actor=True`): the object stays on
   * the worker that made it, and its future's result is a handle through
   * which clients and tasks call its methods. Default false.
   */
  readonly actor?: boolean;
  /**
   * Annotations kept with the task and passed on to the worker (Dask's `annotate`), opaque to the
   * scheduler.
   */
  readonly annotations?: Readonly<Record<string, unknown>>;
}

/** Submit tasks and say which keys the client wants (Dask's `update-graph`). */
export interface UpdateGraphMsg {
  readonly op: "update-graph";
  /**
   * `key → task`; tasks the wanted keys do not need are ignored. A `Map`
   * rather than an object: building an object of many fresh keys costs V8
   * about three times as much (each key is interned as a property name).
   */
  readonly tasks: ReadonlyMap<Key, GraphTask>;
  /** The keys the client wants results for. */
  readonly keys: readonly Key[];
  readonly clientId: string;
  readonly stimulusId: string;
  /**
   * The client's count of the messages it sent that want keys, this one
   * included (optional). The scheduler keeps the last it handled and puts it
   * in `cancelled-keys`, so that the client can tell a notice that predates a
   * new request for the same key.
   */
  readonly submission?: number;
}

/** The client no longer wants these keys (Dask's `client-releases-keys`). */
export interface ClientReleasesKeysMsg {
  readonly op: "client-releases-keys";
  /** The keys released. */
  readonly keys: readonly Key[];
  readonly clientId: string;
  readonly stimulusId: string;
}

/** The client wants these already-known keys (Dask's `client-desires-keys`). */
export interface ClientDesiresKeysMsg {
  readonly op: "client-desires-keys";
  /** The keys the client wants; unknown ones are answered with `cancelled-keys`. */
  readonly keys: readonly Key[];
  readonly clientId: string;
  readonly stimulusId: string;
  /** As in {@link UpdateGraphMsg}. */
  readonly submission?: number;
}

/** Cancel these keys and the tasks depending on them (Dask's `cancel-keys`). */
export interface CancelKeysMsg {
  readonly op: "cancel-keys";
  /** The keys to cancel. */
  readonly keys: readonly Key[];
  readonly clientId: string;
  /** Cancel even keys other clients want. Default false. */
  readonly force?: boolean;
  /** Passed on in `cancelled-keys`. */
  readonly reason?: string;
  readonly stimulusId: string;
}

/** The client disconnects: everything it wanted is released (Dask's `close-client`). */
export interface CloseClientMsg {
  readonly op: "close-client";
  readonly clientId: string;
  readonly stimulusId: string;
}

/**
 * Run these keys' tasks even once no client wants them (Dask's
 * `fire_and_forget`): the scheduler holds them for a stand-in client until
 * each is done, then lets them go. Keys already done, or unknown, are ignored.
 */
export interface FireAndForgetMsg {
  readonly op: "fire-and-forget";
  /** The keys to run to completion. */
  readonly keys: readonly Key[];
  readonly clientId: string;
  readonly stimulusId: string;
}

/**
 * Publish a dataset under `name` (Dask's `publish_dataset`): the scheduler
 * keeps `data` and holds `keys` for a stand-in client of its own until the
 * dataset is unpublished, whoever published it. Answered with
 * `dataset-published`.
 */
export interface PublishDatasetMsg {
  readonly op: "publish-dataset";
  /** The dataset's name, unique among published datasets. */
  readonly name: string;
  /** The keys of the futures in `data`: each must be known to the scheduler. */
  readonly keys: readonly Key[];
  /** What the client gets back, opaque to the scheduler (the client's encoding of its value). */
  readonly data: unknown;
  /** Replace a dataset of that name (else publishing one refuses). */
  readonly override?: boolean;
  readonly clientId: string;
  readonly stimulusId: string;
}

/** Get the dataset `name` (Dask's `get_dataset`): answered with `dataset`. */
export interface GetDatasetMsg {
  readonly op: "get-dataset";
  /** The dataset's name. */
  readonly name: string;
  readonly clientId: string;
  readonly stimulusId: string;
  /** As in {@link UpdateGraphMsg}: the client then wants the dataset's keys. */
  readonly submission?: number;
}

/** Forget the dataset `name` (Dask's `unpublish_dataset`): answered with `dataset-unpublished`. */
export interface UnpublishDatasetMsg {
  readonly op: "unpublish-dataset";
  /** The dataset's name. */
  readonly name: string;
  readonly clientId: string;
  readonly stimulusId: string;
}

/** One key of an {@link UpdateDataMsg}: a value the client put on workers. */
export interface ScatteredKey {
  /** The key the value was scattered under. */
  readonly key: Key;
  /** The workers that took the value (with `update_data`): addresses. */
  readonly workers: readonly string[];
  /** Its size in bytes, as the workers measured it. */
  readonly nbytes: number;
  /** Its type name, as the workers reported it. */
  readonly typename: string;
}

/**
 * The client put these values on workers itself (`scatter`, Dask's
 * `update_data`): the scheduler records each new key as a task in memory on
 * those workers, without a run spec (it cannot be recomputed), and wanted by
 * the client. Answered with `data-updated`.
 */
export interface UpdateDataMsg {
  readonly op: "update-data";
  /** The values put on workers, one entry per key. */
  readonly keys: readonly ScatteredKey[];
  readonly clientId: string;
  readonly stimulusId: string;
}

/**
 * Copy these keys' results to more workers (Dask's `replicate`), so that each
 * is held by `n` of the running workers that `workers` allows. Answered with
 * `replicated` once every copy asked for has arrived or failed.
 */
export interface ReplicateMsg {
  readonly op: "replicate";
  /** The keys to copy; each must be in memory. */
  readonly keys: readonly Key[];
  /** Holders wanted per key, among the allowed workers (at most all of them). Default: all. */
  readonly n?: number;
  /** The workers that may hold copies: addresses or hosts. Default: every running worker. */
  readonly workers?: readonly string[];
  readonly clientId: string;
  readonly stimulusId: string;
}

/**
 * Even out the bytes held by the allowed running workers (Dask's
 * `rebalance`) by moving these keys' results (every key in memory if absent)
 * from the workers holding more than the mean to those holding less. A move
 * is a copy (`acquire-replicas`) and, once it has arrived, the removal of the
 * sender's (`remove-replicas`). Answered with `rebalanced` once every copy
 * asked for has arrived or failed.
 */
export interface RebalanceMsg {
  readonly op: "rebalance";
  /** The keys whose results may move. Default: every key in memory. */
  readonly keys?: readonly Key[];
  /** The workers to balance: addresses or hosts. Default: every running worker. */
  readonly workers?: readonly string[];
  readonly clientId: string;
  readonly stimulusId: string;
}

/**
 * Retire these workers (addresses or hosts, or `n` the scheduler picks, or
 * with neither the idle workers it can spare; Dask's `retire_workers`): each
 * stops getting tasks, the results only it holds are copied to other running
 * workers, and then it is removed from the cluster and told to close
 * (`close-worker`). Answered with `workers-retired`.
 */
export interface RetireWorkersMsg {
  readonly op: "retire-workers";
  /**
   * The workers to retire; or, instead, `n`. With neither: the workers running
   * no task, fewest bytes first, while the memory limits of those left add up
   * to twice the bytes held (Dask's `workers_to_close()`).
   */
  readonly workers?: readonly string[];
  /**
   * Retire this many workers, picked by the scheduler (Dask's `retire_workers(n=…)`):
   * those running no task first, then those holding least.
   */
  readonly n?: number;
  readonly clientId: string;
  readonly stimulusId: string;
}

/**
 * Restart the cluster (Dask's `restart`): every task is forgotten, every
 * client loses the keys it wants (`cancelled-keys`), published datasets are
 * dropped, and every worker is told to close (`close-worker` with
 * `restart`) and removed; a worker with a nanny is started again by it.
 * Answered with `restarted`.
 */
export interface RestartMsg {
  readonly op: "restart";
  readonly clientId: string;
  readonly stimulusId: string;
}

/**
 * Restart these workers (addresses or hosts; Dask's `restart_workers`): each
 * one with a nanny is told to close (`close-worker` with `restart`) and
 * removed, its unfinished tasks rescheduled and the results only it held
 * computed again, and its nanny starts another; the other tasks go on.
 * Answered with `workers-restarted`.
 */
export interface RestartWorkersMsg {
  readonly op: "restart-workers";
  /** The workers to restart: addresses or hosts. */
  readonly workers: readonly string[];
  readonly clientId: string;
  readonly stimulusId: string;
}

/**
 * Compute these erred keys again (Dask's `retry`): each goes back to waiting,
 * through the erred inputs it failed with. The clients wanting a key hear
 * `task-retried`; keys not erred are left as they are.
 */
export interface RetryMsg {
  readonly op: "retry";
  /** The erred keys to compute again. */
  readonly keys: readonly Key[];
  readonly clientId: string;
  readonly stimulusId: string;
}

/** Every message a client sends to the scheduler. */
export type ClientToSchedulerMessage =
  | UpdateGraphMsg
  | ClientReleasesKeysMsg
  | ClientDesiresKeysMsg
  | CancelKeysMsg
  | CloseClientMsg
  | FireAndForgetMsg
  | PublishDatasetMsg
  | GetDatasetMsg
  | UnpublishDatasetMsg
  | UpdateDataMsg
  | ReplicateMsg
  | RebalanceMsg
  | RetireWorkersMsg
  | RestartMsg
  | RestartWorkersMsg
  | RetryMsg;

// ---------------------------------------------------------------------------
// scheduler → client
// ---------------------------------------------------------------------------

/** A wanted key's result is in a worker's memory (Dask's `key-in-memory`). */
export interface KeyInMemoryMsg {
  readonly op: "key-in-memory";
  /** The key now in memory. */
  readonly key: Key;
  /** The result's type name, as its worker reported it; null if it did not. */
  readonly typename: string | null;
  readonly stimulusId: string;
}

/**
 * A wanted key failed (Dask's `task-erred`): it raised, or a task it depends on
 * did (then the texts are those of the task that raised, named in `blame`).
 */
export interface ClientTaskErredMsg {
  readonly op: "task-erred";
  /** The wanted key that failed. */
  readonly key: Key;
  /** The key of the task that raised: `key` itself or one of its dependencies. */
  readonly blame: Key;
  /** The opaque error the worker reported. */
  readonly exception: unknown;
  /** The opaque traceback the worker reported, if any. */
  readonly traceback: unknown;
  /** The error as text (Dask's `exception_text`), as the worker reported it. */
  readonly exceptionText: string;
  /** The traceback as text (Dask's `traceback_text`); may be empty. */
  readonly tracebackText: string;
  readonly stimulusId: string;
}

/** These keys were cancelled or cannot be computed (Dask's `cancelled-keys`). */
export interface CancelledKeysMsg {
  readonly op: "cancelled-keys";
  /** The keys cancelled: the client no longer has them. */
  readonly keys: readonly Key[];
  /** Why, e.g. "lost dependencies", "cancelled by client c1", "already forgotten". */
  readonly reason: string;
  readonly stimulusId: string;
  /**
   * The last `submission` of this client the scheduler had handled when it
   * sent this: the keys are not cancelled for a request the client sent after
   * that one (it is still to be handled).
   */
  readonly submission: number;
}

/**
 * A task the client waits for (the key itself, or one it depends on, named in
 * `task`) cannot run on any running worker, because of its resource
 * restrictions; it waits in `no-worker` until a suitable worker joins.
 */
export interface TaskNoWorkerMsg {
  readonly op: "task-no-worker";
  /** The wanted key that is held up. */
  readonly key: Key;
  /** The task in `no-worker`: `key` itself or one of its dependencies. */
  readonly task: Key;
  /** Why no worker fits, e.g. "no running worker has resource 'GPU'". */
  readonly reason: string;
  readonly stimulusId: string;
}

/**
 * The task named in an earlier `task-no-worker` for `key` is no longer held in
 * `no-worker` (a suitable worker joined, or the task was released): `key` is
 * pending again, unless another task in `no-worker` holds it up (then a new
 * `task-no-worker` names that one).
 */
export interface TaskRunnableMsg {
  readonly op: "task-runnable";
  /** The wanted key that was held up. */
  readonly key: Key;
  /** The task that left `no-worker`: `key` itself or one of its dependencies. */
  readonly task: Key;
  readonly stimulusId: string;
}

/** A wanted key's only replicas were lost; it is being recomputed (Dask's `lost-data`). */
export interface LostDataMsg {
  readonly op: "lost-data";
  /** The key being recomputed. */
  readonly key: Key;
  readonly stimulusId: string;
}

/** An erred key is being computed again (Dask's `task-retried`). */
export interface TaskRetriedMsg {
  readonly op: "task-retried";
  /** The key computed again. */
  readonly key: Key;
  readonly stimulusId: string;
}

/**
 * The answer to `update-data`, with its stimulus id. The keys not rejected are
 * in memory and wanted by the client (their `key-in-memory` came first). A key
 * is rejected when the scheduler already has a task of that name, or when none
 * of its workers is connected any more; the copies of a rejected key on the
 * connected workers that do not hold that task are freed.
 */
export interface DataUpdatedMsg {
  readonly op: "data-updated";
  /** The keys that were not taken, each with why. */
  readonly rejected: readonly {
    readonly key: Key;
    readonly reason: string;
    /** None of its workers is connected any more: the value may be scattered again. */
    readonly workersGone: boolean;
  }[];
  readonly stimulusId: string;
}

/**
 * The answer to `replicate`, with its stimulus id, once every copy it asked for
 * arrived or failed: a key not in memory, a worker that left before it had its
 * copy, a copy the worker could not fetch, a key released meanwhile.
 */
export interface ReplicatedMsg {
  readonly op: "replicated";
  /** The keys that did not get every copy asked for, with why. */
  readonly failed: readonly { readonly key: Key; readonly reason: string }[];
  readonly stimulusId: string;
}

/**
 * The answer to `rebalance`, with its stimulus id, once every move it started
 * has arrived or failed (as `replicated`'s copies).
 */
export interface RebalancedMsg {
  readonly op: "rebalanced";
  /** The keys whose move failed, or that were not in memory, with why. */
  readonly failed: readonly { readonly key: Key; readonly reason: string }[];
  /** The moves made: the copy arrived and the sender was asked to drop its own. */
  readonly moved: number;
  readonly stimulusId: string;
}

/**
 * The answer to `retire-workers`, with its stimulus id, once every worker it
 * named is retired or cannot be: `failed` names those, with why (no other
 * running worker could take its data, it left first, it was being retired
 * already, or no connected worker matches the name).
 */
export interface WorkersRetiredMsg {
  readonly op: "workers-retired";
  /** The addresses of the workers retired. */
  readonly retired: readonly string[];
  /** The workers not retired, each with why. */
  readonly failed: readonly { readonly worker: string; readonly reason: string }[];
  readonly stimulusId: string;
}

/**
 * The answer to `restart`, with its stimulus id, once the scheduler has
 * forgotten every task and told every worker to close: `workers` lists the
 * workers there were, `nannies` those of them a nanny starts again.
 */
export interface RestartedMsg {
  readonly op: "restarted";
  /** The addresses of the workers there were, all told to close. */
  readonly workers: readonly string[];
  /** Those of `workers` that a nanny starts again. */
  readonly nannies: readonly string[];
  readonly stimulusId: string;
}

/**
 * The answer to `restart-workers`, with its stimulus id: `restarted` lists the
 * workers told to close for their nannies to start others, `failed` the
 * others with why (it has no nanny, it is being retired, no connected worker
 * matches the name); `remaining`, how many workers the scheduler had left
 * then, for the client to wait for the new ones.
 */
export interface WorkersRestartedMsg {
  readonly op: "workers-restarted";
  /** The workers told to close for their nannies to start others. */
  readonly restarted: readonly string[];
  /** The workers not restarted, each with why. */
  readonly failed: readonly { readonly worker: string; readonly reason: string }[];
  /** How many workers the scheduler had left then, for the client to wait for new ones. */
  readonly remaining: number;
  readonly stimulusId: string;
}

/** The answer to `publish-dataset`, with its stimulus id: `error` says why it was refused. */
export interface DatasetPublishedMsg {
  readonly op: "dataset-published";
  /** Why publishing was refused (e.g. the name is taken), or null when published. */
  readonly error: string | null;
  readonly stimulusId: string;
}

/**
 * The answer to `get-dataset`, with its stimulus id. When `found`, the client
 * wants `keys` from then on, and what the scheduler knows of them (as for
 * `client-desires-keys`) follows this message.
 */
export interface DatasetMsg {
  readonly op: "dataset";
  /** The dataset's name, as asked. */
  readonly name: string;
  /** Whether a dataset of that name is published; if not, `keys` is empty and `data` null. */
  readonly found: boolean;
  /** The keys of the futures in the dataset. */
  readonly keys: readonly Key[];
  /** What the publisher gave (the client's encoding of its value), opaque to the scheduler. */
  readonly data: unknown;
  /** The request's `submission`, given back: the client's records of `keys` take it. */
  readonly submission?: number;
  readonly stimulusId: string;
}

/** The answer to `unpublish-dataset`, with its stimulus id: whether there was such a dataset. */
export interface DatasetUnpublishedMsg {
  readonly op: "dataset-unpublished";
  /** Whether there was a dataset of that name. */
  readonly existed: boolean;
  readonly stimulusId: string;
}

/** Every message the scheduler sends to a client. */
export type SchedulerToClientMessage =
  | KeyInMemoryMsg
  | DataUpdatedMsg
  | ReplicatedMsg
  | RebalancedMsg
  | WorkersRetiredMsg
  | RestartedMsg
  | WorkersRestartedMsg
  | DatasetPublishedMsg
  | DatasetMsg
  | DatasetUnpublishedMsg
  | ClientTaskErredMsg
  | CancelledKeysMsg
  | TaskNoWorkerMsg
  | TaskRunnableMsg
  | LostDataMsg
  | TaskRetriedMsg;

/** The `op` of every client→scheduler message. */
export type ClientToSchedulerOp = ClientToSchedulerMessage["op"];

/** The `op` of every scheduler→client message. */
export type SchedulerToClientOp = SchedulerToClientMessage["op"];
