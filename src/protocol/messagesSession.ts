/**
 * The messages of the scheduler server's sessions that are not stimuli of the
 * scheduler state machine: the handshakes that open a worker's or a client's
 * connection, and the requests a client makes of the server itself (where
 * keys are held, counters) with their replies.
 *
 * A connection's first message is a handshake ({@link RegisterWorkerHandshakeMsg}
 * or {@link RegisterClientMsg}); the server answers it with one
 * {@link RegisterReplyMsg}. Both carry their sender's {@link WireVersion}, and
 * either end refuses the other unless they speak the same protocol version
 * (`version.ts`). After that both sides send frames that are arrays of
 * messages (a `BatchedSend`).
 *
 * As in the state machine's messages, each names its kind in `op` (and
 * `clientId` names a client); those fields have no doc of their own.
 */

import type { Comm } from "../comm/comm.ts";
import { showValue } from "../util/showValue.ts";
import type { StartStop } from "../worker/state/taskState.ts";
import type { KeyInMemoryMsg, SchedulerToClientMessage } from "./messagesClient.ts";
import type { Key } from "./messagesTaskSpec.ts";
import type { RegisterWorkerMsg, SpilledValues } from "./messagesWorker.ts";
import type { UploadedFile } from "./uploads.ts";

/** What a handshake and its reply say of their sender's weft. */
export interface WireVersion {
  /** The sender's `WIRE_PROTOCOL_VERSION`; the two ends must have the same. */
  readonly protocolVersion: number;
  /** The sender's weft (package) version, or "unknown": for the message of a refusal. */
  readonly weftVersion: string;
}

/** What a handshake says of the largest message its sender accepts. */
export interface ReceiveLimit {
  /**
   * The largest message the sender accepts on this connection (its comm's own
   * `maxMessageBytes`), where the connection limits sizes (TCP, a pool
   * thread's connection bridged to a TCP one): the scheduler then refuses to
   * send it more (`Comm.limitSendsTo`), failing that one message rather than
   * have the sender's reader close the connection on it. Absent (an
   * in-process peer, an older weft): nothing is applied, the scheduler sends
   * as before. A value that is not a positive integer is refused.
   */
  readonly maxMessageBytes?: number;
}

/**
 * A worker opens its session: its registration with its version and its
 * receive limit. The server checks and applies those, and hands the state
 * machine the {@link RegisterWorkerMsg} without them.
 */
export interface RegisterWorkerHandshakeMsg extends RegisterWorkerMsg, WireVersion, ReceiveLimit {}

/** A client opens its session (the first message on its connection). */
export interface RegisterClientMsg extends WireVersion, ReceiveLimit {
  readonly op: "register-client";
  /** Unique among the connected clients. */
  readonly clientId: string;
  /**
   * The address of the worker whose tasks use this client (their `getClient()`):
   * the scheduler lets the client go when it removes that worker unasked
   * (`src/scheduler/workerClients.ts`). Absent for any other client.
   */
  readonly worker?: string;
}

/**
 * The {@link ReceiveLimit} to send in a handshake over `comm`: its own
 * `maxMessageBytes`, where it has one (nothing on an in-process comm).
 */
export function receiveLimitOf(comm: Pick<Comm, "maxMessageBytes">): ReceiveLimit {
  const limit = comm.maxMessageBytes;
  return limit === undefined ? {} : { maxMessageBytes: limit };
}

/**
 * The scheduler's check of a {@link ReceiveLimit} `limit` in the handshake
 * `op`: null if absent or a positive integer (then the scheduler applies it to
 * the peer's connection, `Comm.limitSendsTo`), else why the handshake is
 * refused.
 */
export function receiveLimitProblem(
  op: "register-client" | "register-worker",
  limit: unknown,
): string | null {
  if (limit === undefined) return null;
  if (typeof limit === "number" && Number.isSafeInteger(limit) && limit >= 1) return null;
  const who = op === "register-client" ? "client" : "worker";
  return `${op}: maxMessageBytes must be a positive integer (the largest message the ${who} accepts, in bytes), got ${showValue(limit)}`;
}

/**
 * `name-taken`: another connected worker has the name a worker registers
 * with; it may be on its way out (a nanny's worker started again), so the
 * worker asks again for a while.
 */
export type RegisterRefusalCode = "name-taken";

/** The answer to `register-worker` and `register-client`, with the scheduler's version. */
export interface RegisterReplyMsg extends WireVersion {
  readonly op: "register-worker-reply" | "register-client-reply";
  /** `"OK"` when registered; `"error"` when refused (then `message` says why). */
  readonly status: "OK" | "error";
  /** Why the registration was refused. */
  readonly message?: string;
  /** What kind of refusal, when the refused may do something about it. */
  readonly code?: RegisterRefusalCode;
  /**
   * To a worker: the task modules clients loaded into the cluster since it
   * started (`Client.loadTaskModules`), which it imports before anything else.
   */
  readonly taskModules?: readonly string[];
  /**
   * To a worker: the files clients uploaded into the cluster
   * (`Client.uploadFile`), in the order uploaded, which it saves and imports
   * (those with `load`) before the task modules.
   */
  readonly uploads?: readonly UploadedFile[];
  /**
   * To a worker: the worker plugins clients registered (`Client.registerWorkerPlugin`),
   * in the order registered, which it sets up after importing the task modules.
   */
  readonly plugins?: readonly WorkerPluginSpec[];
  /**
   * To a worker that registered with `nanny` (`weft worker --nanny`): the
   * nanny plugins clients registered (`Client.registerNannyPlugin`), in the
   * order registered, which it hands its nanny; a worker without a nanny is
   * not sent them.
   */
  readonly nannyPlugins?: readonly NannyPluginSpec[];
  /**
   * To a client: the scheduler's `leaseTimeoutMs`, after which a lease it has
   * not refreshed expires (it refreshes them every third of it); null: never.
   * Absent from an older scheduler: never.
   */
  readonly leaseTimeoutMs?: number | null;
  /**
   * When registered: the largest message the scheduler accepts (its
   * `--max-message-bytes`), which the worker or client then refuses to send
   * it more than, instead of the scheduler closing the connection on the
   * message. A scheduler that does not send it (an older weft) is sent as
   * before.
   */
  readonly maxMessageBytes?: number;
}

/**
 * Have `comm`, a connection to the scheduler, refuse to send more than the
 * scheduler's receive limit that its `reply` gives ({@link RegisterReplyMsg.maxMessageBytes}),
 * with a `MessageTooLargeError` naming it. A reply without one, or with one
 * that is not a positive integer, changes nothing (sends as before).
 */
export function limitSendsToScheduler(
  comm: Pick<Comm, "limitSendsTo">,
  reply: { readonly maxMessageBytes?: unknown },
): void {
  const limit = reply.maxMessageBytes;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) return;
  comm.limitSendsTo?.(limit, "the scheduler's --max-message-bytes");
}

/**
 * A worker plugin as the scheduler keeps it for the workers to come: the task
 * function (`fn`, by name) that makes it, called with `args` (JSON data) on each
 * worker's main thread, under `name`.
 */
export interface WorkerPluginSpec {
  /** The plugin's name, unique among the cluster's plugins (one of the same name is replaced). */
  readonly name: string;
  /** The name of the task function that makes the plugin. */
  readonly fn: string;
  /** The arguments `fn` is called with (JSON data). */
  readonly args: readonly unknown[];
}

/**
 * The check of a {@link WorkerPluginSpec} from the wire: null if it is one,
 * else what is wrong, naming the plugin as `kind`.
 */
export function workerPluginSpecProblem(v: unknown, kind = "worker plugin"): string | null {
  if (typeof v !== "object" || v === null) return `a ${kind} must be {name, fn, args}`;
  const { name, fn, args } = v as Partial<Record<keyof WorkerPluginSpec, unknown>>;
  if (typeof name !== "string" || name === "") return `a ${kind}'s name must be a non-empty string`;
  if (typeof fn !== "string" || fn === "") {
    return `a ${kind}'s fn must name a task function (a non-empty string)`;
  }
  if (!Array.isArray(args)) return `a ${kind}'s args must be an array`;
  return null;
}

/**
 * The scheduler's refusal of `op` (`unregister-worker-plugin`,
 * `unregister-nanny-plugin`) for a plugin `name` it has not recorded: the
 * client still asks the workers, which may hold one whose registration failed
 * elsewhere.
 */
export function noPluginRecorded(op: string, kind: "worker" | "nanny", name: unknown): string {
  return `${op}: no ${kind} plugin named ${JSON.stringify(name)}`;
}

/**
 * A nanny plugin as the scheduler keeps it for the nannies to come: made in
 * the nanny's process (`weft worker --nanny`) by the task function `fn` on
 * `args`, under `name`, as a worker plugin is on a worker.
 */
export interface NannyPluginSpec extends WorkerPluginSpec {
  /**
   * Whether the nanny restarts its worker once the plugin is set up (Dask's
   * `NannyPlugin.restart`). Absent: as the plugin's own `restart` field says.
   */
  readonly restart?: boolean;
}

/** The check of a {@link NannyPluginSpec} from the wire: null if it is one, else what is wrong. */
export function nannyPluginSpecProblem(v: unknown): string | null {
  const problem = workerPluginSpecProblem(v, "nanny plugin");
  if (problem !== null) return problem;
  const { restart } = v as { restart?: unknown };
  if (restart !== undefined && typeof restart !== "boolean") {
    return "a nanny plugin's restart must be true or false";
  }
  return null;
}

/**
 * Where replicas of these keys are held, answered from the scheduler's state:
 * `{key: [worker address]}`, every task the scheduler knows without `keys`.
 */
export interface WhoHasRequestMsg {
  readonly op: "who-has";
  readonly requestId: number;
  readonly keys?: readonly Key[];
}

/**
 * The keys each worker holds, answered from the scheduler's state:
 * `{address: [key]}`, every connected worker without `workers` (an address
 * not connected gets `[]`).
 */
export interface HasWhatRequestMsg {
  readonly op: "has-what";
  readonly requestId: number;
  readonly workers?: readonly string[];
}

/**
 * The keys each worker is processing (assigned, not yet reported done),
 * answered from the scheduler's state: `{address: [key]}`, every connected
 * worker without `workers` (an address not connected gets `[]`).
 */
export interface ProcessingRequestMsg {
  readonly op: "processing";
  readonly requestId: number;
  readonly workers?: readonly string[];
}

/**
 * The size in bytes of each result whose size the scheduler knows:
 * `{key: nbytes}` for `keys` (every task without), or with `summary` summed
 * by key prefix.
 */
export interface NbytesRequestMsg {
  readonly op: "nbytes";
  readonly requestId: number;
  readonly keys?: readonly Key[];
  readonly summary?: boolean;
}

/** The server's counters ({@link SchedulerCounters}). */
export interface CountersRequestMsg {
  readonly op: "counters";
  readonly requestId: number;
}

/** The connected workers ({@link WorkerIdentity}). */
export interface WorkersRequestMsg {
  readonly op: "workers";
  readonly requestId: number;
}

/** The names of the published datasets, sorted. */
export interface ListDatasetsRequestMsg {
  readonly op: "list-datasets";
  readonly requestId: number;
}

/**
 * Task modules (file URLs) every worker that registers from now on imports
 * (`Client.loadTaskModules`: the client has the workers already there import
 * them). Answered with the cluster's list, in the order loaded. With `asked`,
 * recorded only if the scheduler has no worker it does not name: else
 * answered `{unasked: [addresses]}`, nothing recorded.
 */
export interface LoadTaskModulesRequestMsg {
  readonly op: "load-task-modules";
  readonly requestId: number;
  readonly modules: readonly string[];
  /** The workers that imported them. */
  readonly asked?: readonly string[];
}

/**
 * A worker plugin every worker that registers from now on sets up
 * (`Client.registerWorkerPlugin`: the client has the workers already there set
 * it up). One of the same name is replaced. Answered with the names of the
 * cluster's worker plugins, in the order registered. With `asked`, recorded
 * only if the scheduler has no worker it does not name: else answered
 * `{unasked: [addresses]}`, nothing recorded.
 */
export interface RegisterWorkerPluginRequestMsg extends WorkerPluginSpec {
  readonly op: "register-worker-plugin";
  readonly requestId: number;
  /** The workers that set it up. */
  readonly asked?: readonly string[];
}

/**
 * Forget a worker plugin (`Client.unregisterWorkerPlugin`): workers registering
 * from now on do not set it up. Refused if there is none of that name.
 */
export interface UnregisterWorkerPluginRequestMsg {
  readonly op: "unregister-worker-plugin";
  readonly requestId: number;
  readonly name: string;
}

/**
 * A nanny plugin every worker with a nanny that registers from now on hands
 * its nanny (`Client.registerNannyPlugin`: the client has the workers already
 * there hand it theirs). One of the same name is replaced. Answered with the
 * names of the cluster's nanny plugins, in the order registered. With
 * `asked`, recorded only if the scheduler has no worker with a nanny it does
 * not name: else answered `{unasked: [addresses]}`, nothing recorded.
 */
export interface RegisterNannyPluginRequestMsg extends NannyPluginSpec {
  readonly op: "register-nanny-plugin";
  readonly requestId: number;
  /** The workers whose nannies set it up. */
  readonly asked?: readonly string[];
}

/**
 * Forget a nanny plugin (`Client.unregisterNannyPlugin`): workers registering
 * from now on do not hand it their nannies. Refused if there is none of that name.
 */
export interface UnregisterNannyPluginRequestMsg {
  readonly op: "unregister-nanny-plugin";
  readonly requestId: number;
  readonly name: string;
}

/**
 * Close every worker, then the scheduler (`Client.shutdown`, Dask's): the
 * workers are told to close (`close-worker`, as retired: they exit 0, and a
 * nanny does not start them again), the scheduler closes once the answer, the
 * addresses of the workers told, is on its way.
 */
export interface ShutdownRequestMsg {
  readonly op: "shutdown";
  readonly requestId: number;
}

/**
 * A file every worker that registers from now on saves and, with `load`,
 * imports (`Client.uploadFile`: the client has the workers already there save
 * it). Answered with the names of the cluster's uploaded files, in the order
 * uploaded; refused if a different file of that name was uploaded already.
 * With `asked`, recorded only if the scheduler has no worker it does not
 * name: else answered `{unasked: [addresses]}`, nothing recorded.
 */
export interface UploadFileRequestMsg extends UploadedFile {
  readonly op: "upload-file";
  readonly requestId: number;
  /** The workers that saved (and imported) the file. */
  readonly asked?: readonly string[];
}

/** One task run, as its worker reported it. */
export interface TaskStreamRecord {
  /** The key of the task that ran. */
  readonly key: string;
  /** The worker's address. */
  readonly worker: string;
  /** `"OK"`: the task finished; `"error"`: it raised. */
  readonly status: "OK" | "error";
  /** Wall-clock seconds: the compute, and the transfers and disk reads it waited for. */
  readonly startstops: readonly StartStop[];
  /** The result's bytes, for a task that finished (null if unknown). */
  readonly nbytes: number | null;
}

/**
 * The task runs the workers reported (the task stream), oldest first: those
 * ending at `since` (wall-clock seconds) or later, the last `count` of them.
 */
export interface TaskStreamRequestMsg {
  readonly op: "task-stream";
  /** The request's ID, which its reply carries back. */
  readonly requestId: number;
  /**
   * Only runs ending at this time or later (wall-clock seconds since the epoch). Default: all kept.
   */
  readonly since?: number;
  /** Only the last this many runs. Default: all kept. */
  readonly count?: number;
}

/** The last `n` records the scheduler logged (all it keeps, without `n`), oldest first. */
export interface LogsRequestMsg {
  readonly op: "logs";
  readonly requestId: number;
  readonly n?: number;
}

/**
 * Log `msg` (a client's copy, opaque to the server) under each of `topics`
 * (`Client.logEvent`, Dask's `log_event`): kept with the time, and sent to
 * the topics' subscribers.
 */
export interface LogEventRequestMsg {
  readonly op: "log-event";
  readonly requestId: number;
  readonly topics: readonly string[];
  readonly msg: unknown;
}

/** The events kept of `topic`, or of every topic without one (`Client.getEvents`). */
export interface GetEventsRequestMsg {
  readonly op: "get-events";
  readonly requestId: number;
  readonly topic?: string;
}

/** Be sent (`event`) each event logged under `topic` from now on, or no longer. */
export interface SubscribeTopicRequestMsg {
  readonly op: "subscribe-topic" | "unsubscribe-topic";
  readonly requestId: number;
  readonly topic: string;
}

/**
 * Be sent (`pubsub-msg`) every message put under `name` from now on, or no
 * longer (`Client.sub`, `Sub.close`); or how many clients are subscribed to
 * it now (`Pub.subscribers`).
 */
export interface PubSubRequestMsg {
  readonly op: "pubsub-subscribe" | "pubsub-unsubscribe" | "pubsub-subscribers";
  /** The request's ID, which its reply carries back. */
  readonly requestId: number;
  /** The pub/sub topic's name. */
  readonly name: string;
}

/**
 * A message put under `name` (`Pub.put`; a client's copy, opaque to the
 * server): sent on to the clients subscribed to it now, not answered.
 */
export interface PubSubPutMsg {
  readonly op: "pubsub-put";
  /** The topic's name. */
  readonly name: string;
  /** The message (the client's copy, opaque to the server). */
  readonly msg: unknown;
}

/** A message put under a name the client subscribed to. */
export interface PubSubMsg {
  readonly op: "pubsub-msg";
  /** The topic's name. */
  readonly name: string;
  /** The message (a client's copy, opaque to the server). */
  readonly msg: unknown;
}

/**
 * Set the cluster's metadata at a key path (`Client.setMetadata`, Dask's
 * `set_metadata`), or read it (`get-metadata`, answered `{found, value?}`).
 */
export interface MetadataRequestMsg {
  readonly op: "set-metadata" | "get-metadata";
  /** The request's ID, which its reply carries back. */
  readonly requestId: number;
  /** The key path into the metadata tree (Dask's `keys`); empty for the whole tree. */
  readonly keys: readonly string[];
  /** For `set-metadata`, the value to set (the client's copy, opaque to the server). */
  readonly value?: unknown;
}

/** An event logged under a topic the client subscribed to: `[time, msg]`. */
export interface EventMsg {
  readonly op: "event";
  /** The topic it was logged under. */
  readonly topic: string;
  /** When it was logged (wall-clock seconds since the epoch) and the message logged. */
  readonly event: readonly [number, unknown];
}

/**
 * The scheduler's transition log records of these keys or stimulus ids
 * (`Client.story`, Dask's `get_story`), as Dask's tuples, oldest first.
 */
export interface StoryRequestMsg {
  readonly op: "story";
  readonly requestId: number;
  readonly keys: readonly string[];
}

/**
 * The scheduler's part of a cluster dump (`Client.dumpClusterState`, Dask's
 * `Scheduler._to_dict`): its transition log, workers and tasks.
 */
export interface DumpStateRequestMsg {
  readonly op: "dump-state";
  readonly requestId: number;
}

/**
 * Compute these erred keys again (`Client.retry`, Dask's `retry`): the server
 * hands the state machine a `retry` and answers once it has, with the keys it
 * sent back to be computed, after the `task-retried` notices it sent.
 */
export interface RetryRequestMsg {
  readonly op: "retry";
  readonly requestId: number;
  readonly keys: readonly string[];
}

/** The ops of the requests to the scheduler's coordination primitives. */
export type CoordinationOp =
  | "semaphore-acquire"
  | "semaphore-release"
  | "semaphore-leases"
  | "lock-acquire"
  | "lock-release"
  | "lock-leases"
  | "event-set"
  | "event-clear"
  | "event-is-set"
  | "event-wait"
  | "variable-set"
  | "variable-get"
  | "variable-delete"
  | "queue-put"
  | "queue-get"
  | "queue-get-batch"
  | "queue-size"
  | "lease-refresh"
  | MultiLockOp;

/** The ops of the multi-lock requests, which name their locks in `names`. */
export type MultiLockOp = "multi-lock-acquire" | "multi-lock-release";

/**
 * A request to one of the scheduler's coordination primitives, by `name`
 * (`Client.semaphore`, `lock`, `event`, `variable`, `queue`; locks named
 * apart from semaphores, as Dask's `LockExtension` keeps them): the fields each
 * op takes are checked by `scheduler/coordination/coordination.ts`. One that
 * must wait (an acquire, a wait, a get, a put into a full queue) is answered
 * once it can be, or once its `timeoutMs` has passed.
 */
export interface CoordinationRequestMsg {
  readonly op: Exclude<CoordinationOp, MultiLockOp | "lease-refresh">;
  /** The request's ID, which its reply carries back. */
  readonly requestId: number;
  /** The name of the semaphore, lock, event, variable or queue. */
  readonly name: string;
  readonly [field: string]: unknown;
}

/**
 * Take `numLocks` of the locks `names` at once for the request `id`
 * (`MultiLock.acquire`, Dask's `MultiLock`): answered true once held, false
 * once `timeoutMs` has passed first; or let go of those request `id` holds.
 */
export interface MultiLockRequestMsg {
  readonly op: MultiLockOp;
  readonly requestId: number;
  readonly id: string;
  readonly names?: readonly string[];
  readonly numLocks?: number;
  readonly timeoutMs?: number | null;
}

/**
 * The leases a client holds, refreshed (Dask's `semaphore_refresh_leases`),
 * so that the scheduler does not expire them after its `leaseTimeoutMs`:
 * semaphore and lock leases as `[name, leases]` pairs, and granted multi-lock
 * requests. Answered with `{gone}`, those of them the client no longer holds
 * (expired). Pairs, not an object keyed by name: a lock may be named
 * `__proto__` or `constructor`, which an object would not carry as given.
 */
export interface LeaseRefreshRequestMsg {
  readonly op: "lease-refresh";
  readonly requestId: number;
  readonly semaphores: readonly (readonly [name: string, leases: readonly string[]])[];
  readonly locks: readonly (readonly [name: string, leases: readonly string[]])[];
  readonly multiLocks: readonly string[];
}

/**
 * Run the task function `fn` on `args` (values wrapped to travel as they
 * came) in the scheduler's process (`Client.runOnScheduler`, Dask's
 * `run_on_scheduler`): answered with `{status: "OK", value}` or `{status:
 * "error", error}` (the error it threw, as a task's).
 */
export interface RunOnSchedulerRequestMsg {
  readonly op: "run-on-scheduler";
  readonly requestId: number;
  readonly fn: string;
  readonly args: readonly unknown[];
}

/**
 * Make a scheduler plugin by calling the task function `fn` on `args` (JSON
 * data) in the scheduler's process, and add it under `name`
 * (`Client.registerSchedulerPlugin`, Dask's `register_scheduler_plugin`): one of
 * that name is replaced. Answered with the names of the scheduler's plugins.
 */
export interface RegisterSchedulerPluginRequestMsg extends WorkerPluginSpec {
  readonly op: "register-scheduler-plugin";
  readonly requestId: number;
}

/** Remove the scheduler plugin `name` (closing it): answered with whether there was one. */
export interface UnregisterSchedulerPluginRequestMsg {
  readonly op: "unregister-scheduler-plugin";
  readonly requestId: number;
  readonly name: string;
}

/**
 * Start CPU profile `id` of the scheduler's thread (`Client.profile` with
 * `scheduler: true`), sampling every `intervalUs`, stopping by itself after
 * `maxMs`: answered with "OK" once it runs.
 */
export interface ProfileStartRequestMsg {
  readonly op: "profile-start";
  readonly requestId: number;
  readonly id: string;
  readonly intervalUs: number;
  readonly maxMs: number;
}

/** Stop CPU profile `id` of the scheduler: answered with its profile (a worker's `profile_stop` answer). */
export interface ProfileStopRequestMsg {
  readonly op: "profile-stop";
  readonly requestId: number;
  readonly id: string;
}

/**
 * What an `amm` request asks of the scheduler's Active Memory Manager
 * (Dask's `amm_handler` methods): start its periodic rounds, stop them, say
 * whether they run, or run one round now.
 */
export type AmmMethod = "start" | "stop" | "status" | "run-once";

/**
 * Operate the scheduler's Active Memory Manager at run time (`client.amm`,
 * Dask's `AMMClientProxy` and `amm_handler`): `start` its rounds every
 * `activeMemoryManagerIntervalMs` (nothing if they run), `stop` them
 * (nothing if they do not), `status`, or `run-once`: one round now, a
 * `reduce-replicas` stimulus as the periodic ones. Answered with an
 * {@link AmmStatus} (as it is after a `start` or `stop`), or for `run-once`
 * with the number of replicas the round asked workers to drop.
 */
export interface AmmRequestMsg {
  readonly op: "amm";
  /** The request's ID, which its reply carries back. */
  readonly requestId: number;
  /** What to do. */
  readonly method: AmmMethod;
}

/** Whether the Active Memory Manager runs its rounds, and how often it does when it runs. */
export interface AmmStatus {
  /** True while it runs a round every `intervalMs` (Dask's `amm.running()`). */
  readonly running: boolean;
  /** The scheduler's `activeMemoryManagerIntervalMs`: the time between rounds while it runs. */
  readonly intervalMs: number;
}

/** A request a client makes of the server (not of the state machine). */
export type ClientRequestMsg =
  | WhoHasRequestMsg
  | HasWhatRequestMsg
  | ProcessingRequestMsg
  | NbytesRequestMsg
  | CountersRequestMsg
  | WorkersRequestMsg
  | ListDatasetsRequestMsg
  | LoadTaskModulesRequestMsg
  | UploadFileRequestMsg
  | RegisterWorkerPluginRequestMsg
  | UnregisterWorkerPluginRequestMsg
  | RegisterNannyPluginRequestMsg
  | UnregisterNannyPluginRequestMsg
  | ShutdownRequestMsg
  | TaskStreamRequestMsg
  | LogsRequestMsg
  | RetryRequestMsg
  | DumpStateRequestMsg
  | StoryRequestMsg
  | LogEventRequestMsg
  | GetEventsRequestMsg
  | SubscribeTopicRequestMsg
  | PubSubRequestMsg
  | MetadataRequestMsg
  | CoordinationRequestMsg
  | MultiLockRequestMsg
  | LeaseRefreshRequestMsg
  | RunOnSchedulerRequestMsg
  | RegisterSchedulerPluginRequestMsg
  | UnregisterSchedulerPluginRequestMsg
  | ProfileStartRequestMsg
  | ProfileStopRequestMsg
  | AmmRequestMsg;

/** The `op` of every {@link ClientRequestMsg}. */
export type ClientRequestOp = ClientRequestMsg["op"];

/** The answer to a {@link ClientRequestMsg}: its `result`, or an `error` text. */
export interface ReplyMsg {
  readonly op: "reply";
  /** The ID of the request this answers. */
  readonly requestId: number;
  /** The answer, when the request succeeded. */
  readonly result?: unknown;
  /** Why the request was refused or failed (a refused request has no `result`). */
  readonly error?: string;
}

/** What the server has done since it started. */
export interface SchedulerCounters {
  /**
   * `task-finished` reports received: a task computed again (its worker lost)
   * is counted again, as are duplicate and stale reports.
   */
  readonly tasksFinished: number;
  /** `task-erred` reports received, those of tries that were retried included. */
  readonly tasksErred: number;
  /**
   * Tasks that reached memory or erred (a task erred because an input did
   * included), each counted once while the scheduler knows it, however often
   * it is recomputed or retried: what progress counts.
   */
  readonly tasksDone: number;
  /**
   * Of `tasksDone`, the tasks done by erring (their first completion an error, a
   * task erred because an input did included): what progress shows as erred, as
   * Dask's bar shows them in red. Absent from a scheduler of weft before it.
   */
  readonly tasksDoneErred?: number;
  /** Keys workers fetched from peers (the keys of `add-keys` reports). */
  readonly keysTransferred: number;
  /** Steals asked of workers (work stealing moving a queued task to an idle worker). */
  readonly stealsRequested: number;
  /** Steals the victim confirmed (it had not started the task), which moved the task. */
  readonly stealsConfirmed: number;
  /** Replicas the Active Memory Manager asked workers to drop (ReduceReplicas). */
  readonly replicasDropped: number;
  /** Tasks the scheduler knows now. */
  readonly tasks: number;
  /** Workers connected now. */
  readonly workers: number;
  /** Clients connected now. */
  readonly clients: number;
  /** Messages rejected as malformed. */
  readonly rejectedMessages: number;
}

/** A connected worker, as the `workers` request lists it. */
export interface WorkerIdentity {
  /** The worker's address (`tcp://host:port`). */
  readonly address: string;
  /** The name it registered with (`weft worker --name`), or null. */
  readonly name: string | null;
  /** Its thread count. */
  readonly nthreads: number;
  /** The abstract resources it supplies, `{name: amount}`. */
  readonly resources: Readonly<Record<string, number>>;
  /** Its status at the scheduler: `running`, `paused` or `closed`. */
  readonly status: string;
  /** Tasks assigned to it, running or about to (Dask's `processing`). */
  readonly processing: number;
  /** Results it holds. */
  readonly keys: number;
  /** Their bytes, as the workers measured them (Dask's `nbytes`). */
  readonly nbytes: number;
  /** Of those, what it keeps on disk, as of its last heartbeat (with a `memoryLimit`), or null. */
  readonly spilled: SpilledValues | null;
  /** Its `memoryLimit` in bytes, or null for none. */
  readonly memoryLimit: number | null;
  /** The memory its monitor measured, as of its last heartbeat (with a `memoryLimit`), or null. */
  readonly memory: number | null;
  /** A nanny starts another in its place when it is restarted (`weft worker --nanny`, a `LocalCluster`'s). */
  readonly nanny: boolean;
  /** The actors living on it, or being made there (Dask's `WorkerState.actors`). */
  readonly actors: number;
  /**
   * Its registration with the scheduler, as Dask's worker `id` names its
   * process: another for a worker restarted at the same address. Absent from
   * a scheduler of a weft without it.
   */
  readonly id?: string;
}

/**
 * `key-in-memory` as the server sends it to clients: with the workers holding
 * the key when the message left, so that the client can fetch it without
 * asking (it asks with `who-has` if that list turns out stale).
 */
export interface KeyInMemoryWithHoldersMsg extends KeyInMemoryMsg {
  /** The addresses of the workers holding the key when the message left. */
  readonly whoHas: readonly string[];
}

/** The scheduler cannot go on (a bug in the state machine); the connection closes next. */
export interface SchedulerFailedMsg {
  readonly op: "scheduler-failed";
  /** What went wrong, for the client's error. */
  readonly message: string;
}

/**
 * The scheduler could not send `answer`, its answer to the client's request
 * of `stimulusId` (`update-data`, `get-dataset`, …, answered by stimulus id):
 * larger than the client's `maxMessageBytes` or the scheduler's, or not
 * encodable. The request fails with `error`, instead of waiting forever. For a
 * `dataset` found, `keys` are those the answer had the client want: it lets go
 * of those it holds no future of. (An older client ignores it, and waits.)
 */
export interface AnswerUnsentMsg {
  readonly op: "answer-unsent";
  /** The op of the answer that could not be sent (`"dataset"`). */
  readonly answer: string;
  /** Why, naming the sizes and whose limit. */
  readonly error: string;
  /** For a `dataset` found: the keys the client was made to want. */
  readonly keys?: readonly Key[];
  /** The stimulus id of the request (and of its answer). */
  readonly stimulusId: string;
}

/**
 * The scheduler refused the client's message `refused` (its op) of
 * `stimulusId` as malformed, changing nothing: a request waiting for an answer
 * under that stimulus id (`cancel-keys`, `publish-dataset`, …) fails with
 * `error`, instead of waiting forever. (An older client ignores it, and waits,
 * as it did when nothing was said.)
 */
export interface MessageRefusedMsg {
  readonly op: "message-refused";
  /** The op of the message refused (`"cancel-keys"`). */
  readonly refused: string;
  /** Why, as the scheduler's log says it. */
  readonly error: string;
  /** The stimulus id of the message refused. */
  readonly stimulusId: string;
}

/** Every message the server sends a client after the handshake. */
export type ServerToClientMessage =
  | SchedulerToClientMessage
  | KeyInMemoryWithHoldersMsg
  | ReplyMsg
  | EventMsg
  | PubSubMsg
  | SchedulerFailedMsg
  | AnswerUnsentMsg
  | MessageRefusedMsg;
