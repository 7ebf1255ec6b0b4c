/** The errors a client's futures fail with. */

import { nameAndMessage } from "./errorText.ts";

/**
 * A task failed on a worker: re-raised at the client with the remote error's
 * texts. `stack` is the remote stack: the frames of the task function on the
 * worker where it raised.
 */
export class RemoteTaskError extends Error {
  override name = "RemoteTaskError";
  /** The key the client waited for. */
  readonly key: string;
  /** The key of the task that raised: `key` itself or one it depends on. */
  readonly blame: string;
  /** The remote error's class name, e.g. `"TypeError"` (from `exceptionText` when unknown). */
  readonly remoteName: string;
  /** The remote error's message. */
  readonly remoteMessage: string;
  /** `"Name: message"`, as the worker reported it. */
  readonly exceptionText: string;
  /** The remote stack frames, as the worker reported them. */
  readonly tracebackText: string;
  /** The error object the worker sent (plain fields), if any. */
  readonly remoteError: unknown;

  constructor(fields: {
    key: string;
    blame: string;
    exception: unknown;
    exceptionText: string;
    tracebackText: string;
  }) {
    const { key, blame } = fields;
    const exceptionText = String(fields.exceptionText);
    const tracebackText = typeof fields.tracebackText === "string" ? fields.tracebackText : "";
    const via = blame === key ? "" : ` (because its dependency ${blame} failed)`;
    super(`task ${key} failed${via}: ${exceptionText}`);
    this.key = key;
    this.blame = blame;
    this.exceptionText = exceptionText;
    this.tracebackText = tracebackText;
    this.remoteError = fields.exception;
    const exc = fields.exception as { name?: unknown; message?: unknown } | null | undefined;
    const fromText = nameAndMessage(exceptionText);
    this.remoteName = typeof exc?.name === "string" ? exc.name : fromText.name;
    this.remoteMessage = typeof exc?.message === "string" ? exc.message : fromText.message;
    // The stack is the remote one: where the task failed on the worker.
    const remote = tracebackText.trimEnd();
    this.stack = `${this.name}: ${this.message}${remote === "" ? "" : `\n${remote}`}`;
  }
}

/** The key was cancelled (by this or another client) or cannot be computed. */
export class CancelledError extends Error {
  override name = "CancelledError";
  constructor(
    /** The key that was cancelled. */
    readonly key: string,
    /** The scheduler's reason, e.g. "cancelled by client c1", "lost dependencies: x unknown". */
    readonly reason: string,
  ) {
    super(`${key} was cancelled: ${reason}`);
  }
}

/**
 * No connected worker can run the task the key needs (e.g. a resource none
 * has). The key stays wanted: when a suitable worker joins, the future goes
 * back to `pending` and finishes after all.
 */
export class NoWorkerError extends Error {
  override name = "NoWorkerError";
  constructor(
    /** The wanted key that is held up. */
    readonly key: string,
    /** The task held up: `key` itself or one it depends on. */
    readonly task: string,
    /** The scheduler's reason, e.g. "no running worker has resource 'GPU'". */
    readonly reason: string,
  ) {
    super(
      task === key
        ? `no worker can run ${key}: ${reason}`
        : `no worker can run ${task}, which ${key} needs: ${reason}`,
    );
  }
}

/** `Client.waitForWorkers` gave up: fewer workers than asked for were running when it timed out. */
export class WorkersTimeoutError extends Error {
  override name = "WorkersTimeoutError";
  constructor(
    /** How many running workers were asked for. */
    readonly wanted: number,
    /** How many were running at the last look (0 if the scheduler answered none). */
    readonly running: number,
    /** The timeout that passed, in ms. */
    readonly timeoutMs: number,
  ) {
    super(`only ${running} of ${wanted} workers running after ${timeoutMs} ms`);
  }
}

/**
 * `Client.restart` gave up waiting: fewer workers than there were before the
 * restart had come back when it timed out (Dask's message, with its advice).
 */
export class RestartTimeoutError extends WorkersTimeoutError {
  override name = "RestartTimeoutError";
  constructor(
    wanted: number,
    running: number,
    timeoutMs: number,
    /** How many of the workers had a nanny to start them again. */
    readonly nannies: number,
  ) {
    super(wanted, running, timeoutMs);
    let message =
      `waited ${timeoutMs} ms for ${wanted} worker(s) to come back after the restart, but only ` +
      `${running} did: restart with a longer timeoutMs, or with waitForWorkers: false`;
    if (nannies < wanted) {
      message +=
        `. ${wanted - nannies} of them had no nanny, so they were closed rather than restarted: ` +
        "unless something starts them again (weft worker --nanny does), they never come back";
    }
    this.message = message;
  }
}

/** `getMetadata` found nothing at the keys and was given no default (Dask's `KeyError`). */
export class MetadataKeyError extends Error {
  override name = "MetadataKeyError";
}

/** A `Variable.get`, `Queue.get` or `Queue.put` waited `timeoutMs` in vain (Dask's `TimeoutError`). */
export class CoordinationTimeoutError extends Error {
  override name = "CoordinationTimeoutError";
}

/**
 * `Queue.getBatch` took items whose futures were lost (the cluster restarted
 * since they were put, or their dataset was removed), as `Queue.get` rejects
 * for one such item. Every item taken is off the queue: `items` holds the
 * others, in queue order, with futures of this client, as `getBatch` would
 * have resolved with them.
 */
export class QueueItemsLostError extends Error {
  override name = "QueueItemsLostError";
  constructor(
    /** The queue's name. */
    readonly queue: string,
    /** How many of the items taken had lost their futures. */
    readonly lost: number,
    /** How many items were taken. */
    readonly taken: number,
    /** The items taken whose futures were not lost, in queue order. */
    readonly items: readonly unknown[],
  ) {
    super(
      `Queue.getBatch ${JSON.stringify(queue)}: the futures of ${lost} of the ${taken} items taken were lost ` +
        "(the cluster restarted since they were put, or their dataset was removed); " +
        `the other ${taken - lost} are this error's items`,
    );
  }
}

/**
 * The scheduler answered a request of this client with an error: it refused
 * it (a queue asked for with another `maxsize` than it has, a worker plugin
 * unregistered that was never registered, a graph submitted that it refused
 * as malformed, …) or could not carry it out.
 * `reason` is the scheduler's message; the message starts with `method`, the
 * client's call that asked, when known (every call of a coordination
 * primitive: `Queue.get: queue "Q" has maxsize 2, not 0`). A request that got
 * no answer because the connection ended fails with a `ClientClosedError`
 * instead.
 */
export class SchedulerReplyError extends Error {
  override name = "SchedulerReplyError";
  constructor(
    /** The request's `op` on the wire (e.g. `"queue-get"`). */
    readonly op: string,
    /** The scheduler's message. */
    readonly reason: string,
    /** The client's method that made the request (e.g. `"Queue.get"`), if known. */
    readonly method: string | null = null,
  ) {
    super(method === null ? reason : `${method}: ${reason}`);
  }
}

/** The client was closed, lost its scheduler, or the future was released, before the result came. */
export class ClientClosedError extends Error {
  override name = "ClientClosedError";
}

/** The result of a finished key could not be fetched from any worker holding it. */
export class LostKeyError extends Error {
  override name = "LostKeyError";
  constructor(
    /** The key whose result could not be fetched. */
    readonly key: string,
    why: string,
  ) {
    super(`cannot fetch the result of ${key}: ${why}`);
  }
}

/**
 * A worker holding the result answered the fetch with an error: the value
 * cannot be sent to this client (larger than `maxMessageBytes`, or not
 * serialisable). Final: asking again would fail the same way. The worker's
 * error is the `cause`.
 */
export class ResultFetchError extends Error {
  override name = "ResultFetchError";
  constructor(
    /** The key whose result could not be fetched. */
    readonly key: string,
    why: string,
    options?: ErrorOptions,
  ) {
    super(`cannot fetch the result of ${key}: ${why}`, options);
  }
}

/**
 * `Client.scatter` failed: no worker was running (among those asked for), none
 * could be reached, a worker could not store a value, or the scheduler
 * rejected a key. The values it had put on workers are released.
 */
export class ScatterError extends Error {
  override name = "ScatterError";
}

/**
 * A function `client.run` ran on a worker failed there (`remoteName`,
 * `exceptionText` and `tracebackText` are its error's), or the worker could not
 * be asked (then `cause` is why).
 */
export class RunError extends Error {
  override name = "RunError";
  constructor(
    /** The worker's address. */
    readonly worker: string,
    /** `"Name: message"` of the error. */
    readonly exceptionText: string,
    /** The remote stack frames, when the function threw. */
    readonly tracebackText = "",
    options?: ErrorOptions,
  ) {
    super(`run on ${worker} failed: ${exceptionText}`, options);
  }
}

/** A worker could not import the task modules `loadTaskModules` gave it (or could not be asked). */
export class TaskModuleError extends Error {
  override name = "TaskModuleError";
  constructor(
    /** The worker's address. */
    readonly worker: string,
    /** What went wrong there. */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`loading task modules on ${worker} failed: ${reason}`, options);
  }
}

/** A worker could not make or set up the plugin `registerWorkerPlugin` gave it (or could not be asked). */
export class WorkerPluginError extends Error {
  override name = "WorkerPluginError";
  constructor(
    /** The worker's address. */
    readonly worker: string,
    /** The plugin's name. */
    readonly plugin: string,
    /** What went wrong there. */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`worker plugin ${JSON.stringify(plugin)} on ${worker}: ${reason}`, options);
  }
}

/**
 * The nanny of a worker could not make, set up or tear down the plugin
 * `registerNannyPlugin` gave it (or the worker could not be asked, or has no
 * nanny that takes plugins). A {@link WorkerPluginError}: `worker` is the
 * worker's address.
 */
export class NannyPluginError extends WorkerPluginError {
  override name = "NannyPluginError";
  constructor(worker: string, plugin: string, reason: string, options?: ErrorOptions) {
    super(worker, plugin, reason, options);
    this.message = `nanny plugin ${JSON.stringify(plugin)} of the worker at ${worker}: ${reason}`;
  }
}

/** A worker could not save or import a file `uploadFile` gave it (or could not be asked). */
export class UploadError extends Error {
  override name = "UploadError";
  constructor(
    /** The worker's address. */
    readonly worker: string,
    /** The file's name. */
    readonly file: string,
    /** What went wrong there. */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`uploading ${file} to ${worker} failed: ${reason}`, options);
  }
}

/**
 * A dataset call failed: `getDataset` of a name nothing is published under,
 * `publishDataset` of a name taken (without `override`) or of futures whose
 * keys the scheduler no longer has, or the scheduler could not be told.
 */
export class DatasetError extends Error {
  override name = "DatasetError";
}

/**
 * `Client.replicate` did not get every copy it asked for: `failed` names each
 * such key with why (a worker left before it had its copy, could not fetch
 * it, or the key was released or lost meanwhile). The copies that arrived stay.
 */
export class ReplicateError extends Error {
  override name = "ReplicateError";
  constructor(
    /** The keys that did not get every copy asked for, each with why. */
    readonly failed: readonly { readonly key: string; readonly reason: string }[],
    message = `replicate: ${failed.length} key${failed.length === 1 ? "" : "s"} did not get every copy: ${failed
      .slice(0, 3)
      .map((f) => `${f.key}: ${f.reason}`)
      .join("; ")}${failed.length > 3 ? "; …" : ""}`,
  ) {
    super(message);
  }
}

/**
 * `Client.rebalance` did not make every move it started: `failed` names each
 * such key with why (the recipient left before it had its copy, could not
 * fetch it, or the key was released or lost meanwhile), and the keys asked
 * for that were not in memory. The sender keeps its copy of a key whose move
 * failed; the moves that were made stay.
 */
export class RebalanceError extends Error {
  override name = "RebalanceError";
  constructor(
    /** The keys that could not be moved, each with why. */
    readonly failed: readonly { readonly key: string; readonly reason: string }[],
    message = `rebalance: ${failed.length} key${failed.length === 1 ? "" : "s"} could not be moved: ${failed
      .slice(0, 3)
      .map((f) => `${f.key}: ${f.reason}`)
      .join("; ")}${failed.length > 3 ? "; …" : ""}`,
  ) {
    super(message);
  }
}
