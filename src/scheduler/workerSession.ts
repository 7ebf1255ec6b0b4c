/**
 * One worker's connection: the `register-worker` handshake, then the
 * worker's batched stream turned into stimuli, until the connection ends and
 * the state machine is told the worker is gone.
 */

import type { BatchedSend } from "../comm/batchedSend.ts";
import { logBrokenConnection } from "../comm/brokenConnection.ts";
import { type Comm, commOptionsOf } from "../comm/comm.ts";
import { connect } from "../comm/connect.ts";
import { CommAbortedError } from "../comm/errors.ts";
import { forEachMessage } from "../comm/forEachMessage.ts";
import {
  type RegisterRefusalCode,
  type RegisterReplyMsg,
  type RegisterWorkerHandshakeMsg,
  receiveLimitProblem,
} from "../protocol/messagesSession.ts";
import type {
  ComputeTaskMsg,
  ProfileEndedMsg,
  ProfileStartedMsg,
  RegisterWorkerMsg,
  WorkerToSchedulerMessage,
} from "../protocol/messagesWorker.ts";
import { protocolMismatch, wireVersion } from "../protocol/version.ts";
import { resourcesText } from "../util/resourceAmount.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { logWorkerEvent } from "./events.ts";
import { oversizedMessageRecord } from "./oversizedMessage.ts";
import { type SessionHost, sessionStream } from "./sessionHost.ts";
import type { SchedulerEvent } from "./state/events.ts";
import { nameTaken, workerNamed } from "./state/workerLifecycle.ts";
import { workerMessageHalves } from "./unsentToWorker.ts";
import { logWorkerLoss, workerLoss } from "./workerLoss.ts";

/**
 * How long a refusal of one worker for one reason is logged at debug, not
 * warn, once said: a worker whose name is taken asks again every half second
 * until its connect timeout (30 s by default), which logged 60 warnings.
 */
const REFUSAL_QUIET_MS = 60_000;

/** When each scheduler last warned of a refusal, by worker address and reason. */
const refusalsSaid = new WeakMap<SessionHost, Map<string, number>>();

/** True if `host` warned of refusing `worker` for `why` within the last {@link REFUSAL_QUIET_MS}. */
function saidRecently(host: SessionHost, worker: string, why: string): boolean {
  let said = refusalsSaid.get(host);
  if (said === undefined) refusalsSaid.set(host, (said = new Map()));
  const now = Date.now();
  for (const [key, at] of said) if (now - at >= REFUSAL_QUIET_MS) said.delete(key);
  const key = `${worker}\n${why}`;
  if (said.has(key)) return true;
  said.set(key, now);
  return false;
}

async function refuse(
  host: SessionHost,
  comm: Comm,
  why: string,
  code?: RegisterRefusalCode,
  worker?: string,
): Promise<void> {
  const fields = { peer: comm.peerAddress, reason: why };
  if (worker !== undefined && saidRecently(host, worker, why)) {
    host.logger.debug({ ...fields, worker }, "refused a worker again");
  } else host.logger.warn(fields, "refused a worker");
  const reply: RegisterReplyMsg = {
    op: "register-worker-reply",
    status: "error",
    message: why,
    ...(code !== undefined ? { code } : {}),
    ...wireVersion(),
  };
  try {
    await comm.send(reply);
  } catch {
    // the worker is gone already
  }
  await comm.close();
}

/**
 * Why `address` cannot be connected to, or null once a connection was made (and
 * closed), or once the server closes meanwhile (the caller then finds it not running).
 */
async function reachProblem(host: SessionHost, address: string): Promise<string | null> {
  try {
    const probe = await connect(address, {
      timeoutMs: Math.min(host.options.handshakeTimeoutMs, 5_000),
      ...commOptionsOf(host.options),
      signal: host.closing,
    });
    // Orderly: the worker's rpc server sees a peer that said nothing and left.
    await probe.close();
    return null;
  } catch (err) {
    // Not the worker's fault: it is not refused for it.
    if (host.closing.aborted) return null;
    return (err as Error).message;
  }
}

/**
 * True if a registered worker has `address`. The connection of a worker the
 * scheduler removed (retired, or the cluster restarted) may outlive it for a
 * while (`Router.leaving`: the plugins were told it left when it was removed):
 * it is dropped, and the address given to the new worker (a nanny's,
 * listening where the old one did). Its session then ends without a word.
 */
function addressTaken(host: SessionHost, address: string): boolean {
  if (host.router.workers.has(address)) return true;
  const old = host.router.leaving.get(address);
  if (old !== undefined) {
    host.router.leavingEnded(address, old);
    old.comm.abort();
  }
  return false;
}

/**
 * A `compute-task` that could not be sent to `address` (larger than
 * `maxMessageBytes`, say): the worker never hears of the task, so it would stay
 * processing there for good. It fails instead, as if the worker had reported
 * the error (so `retries` apply, and a late report of the run is stale).
 */
function computeTaskUnsent(host: SessionHost, address: string, m: unknown, err: unknown): void {
  const msg = m as Partial<ComputeTaskMsg> | null;
  if (msg?.op !== "compute-task" || typeof msg.key !== "string") return;
  if (typeof msg.runId !== "number") return;
  const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  const text = `the scheduler could not send the task to ${address}: ${why}`;
  host.dispatch([
    {
      kind: "worker-message",
      worker: address,
      msg: {
        op: "task-erred",
        key: msg.key,
        runId: msg.runId,
        exception: { name: err instanceof Error ? err.name : "Error", message: text },
        traceback: null,
        exceptionText: text,
        tracebackText: "",
        stimulusId: newStimulusId("compute-task-unsent"),
      },
    },
  ]);
}

/** Worker registrations so far, in this process: each one's `id` (see `Router.registrations`). */
let registrations = 0;

/**
 * Serve the worker whose first message, `first`, is a `register-worker`.
 * Resolves once its connection has ended.
 */
function isProfileNotice(msg: unknown): msg is ProfileStartedMsg | ProfileEndedMsg {
  if (typeof msg !== "object" || msg === null) return false;
  const op = (msg as { op?: unknown }).op;
  return op === "profile-started" || op === "profile-ended";
}

/**
 * A worker's word on a profile a client started there: recorded, or, its client
 * removed already, discarded at once. A malformed one is counted and logged.
 */
function profileNotice(
  host: SessionHost,
  worker: string,
  stream: BatchedSend,
  msg: ProfileStartedMsg | ProfileEndedMsg,
): void {
  const { id } = msg;
  const client = msg.op === "profile-started" ? msg.client : "";
  if (typeof id !== "string" || typeof client !== "string") {
    host.counters.rejectedMessages++;
    host.logger.error(
      { worker, op: msg.op },
      `rejected a malformed message: ${msg.op} needs a profile id${msg.op === "profile-started" ? " and a client" : ""}`,
    );
    return;
  }
  if (msg.op === "profile-ended") {
    host.clientProfiles.ended(worker, id);
    return;
  }
  const connected = host.router.clients.has(client);
  if (!host.clientProfiles.started(worker, id, client, connected) && !stream.isClosed) {
    stream.send({ op: "profile-discard", id });
  }
}

export async function serveWorker(host: SessionHost, comm: Comm, first: object): Promise<void> {
  const handshake = first as Partial<RegisterWorkerHandshakeMsg>;
  // First: a worker of another version may not even give its address the same way.
  const mismatch = protocolMismatch("the worker", "this scheduler", handshake);
  if (mismatch !== null) return refuse(host, comm, mismatch);
  // The versions and the receive limit are the server's business: the state machine
  // gets the registration alone.
  const {
    protocolVersion: _,
    weftVersion: __,
    maxMessageBytes: ownLimit,
    ...registration
  } = handshake;
  const msg = registration as RegisterWorkerMsg;
  const address = msg.address;
  if (typeof address !== "string" || address === "") {
    return refuse(host, comm, "register-worker must give the worker's address");
  }
  const badLimit = receiveLimitProblem("register-worker", ownLimit);
  if (badLimit !== null) return refuse(host, comm, badLimit);
  if (addressTaken(host, address)) {
    return refuse(host, comm, `a worker is already registered at ${address}`);
  }
  if (
    host.options.checkWorkerAddress &&
    (address.startsWith("tcp://") || address.startsWith("tls://"))
  ) {
    const problem = await reachProblem(host, address);
    if (problem !== null) {
      return refuse(
        host,
        comm,
        `cannot reach the worker at its address ${address} (${problem}): its peers could not either; check its --listen / --contact-address`,
      );
    }
    // Checked while other registrations went on.
    if (!host.isRunning) return comm.close();
    if (addressTaken(host, address)) {
      return refuse(host, comm, `a worker is already registered at ${address}`);
    }
  }
  // Its name may be that of a worker on its way out (a nanny's worker started
  // again): the refusal says so, and the worker asks again for a while.
  const holder = typeof msg.name === "string" ? workerNamed(host.state, msg.name) : undefined;
  if (holder !== undefined) return refuse(host, comm, nameTaken(holder), "name-taken", address);
  const outcome = host.runner.tryRun([{ kind: "worker-message", worker: address, msg }]);
  if (!outcome.ok) return refuse(host, comm, outcome.error.message);
  // Before anything is sent: a compute-task larger than the worker takes then fails the task
  // (computeTaskUnsent), rather than the worker's reader closing the connection on it.
  if (ownLimit !== undefined) {
    comm.limitSendsTo?.(ownLimit, `the maxMessageBytes of worker ${address}`);
  }

  const stream: BatchedSend = sessionStream(
    host,
    comm,
    { worker: address },
    {
      onDropped: (m, err) => {
        computeTaskUnsent(host, address, m, err);
        // A message of many keys: in halves, which may fit.
        const halves = workerMessageHalves(m, err);
        if (halves.length > 0 && !stream.isClosed) stream.send(...halves);
        return halves.length > 0;
      },
    },
  );
  host.router.workers.set(address, stream);
  host.router.registrations.set(stream, `${++registrations}`);
  // Sent before the stream's first batch, which leaves at the next turn at the earliest.
  const ok: RegisterReplyMsg = {
    op: "register-worker-reply",
    status: "OK",
    ...(host.taskModules.length > 0 ? { taskModules: [...host.taskModules] } : {}),
    ...(host.uploads.length > 0 ? { uploads: [...host.uploads] } : {}),
    ...(host.workerPlugins.length > 0 ? { plugins: [...host.workerPlugins] } : {}),
    // Only a worker with a nanny can hand them on (as Dask sends nanny plugins to nannies only).
    ...(msg.nanny === true && host.nannyPlugins.length > 0
      ? { nannyPlugins: [...host.nannyPlugins] }
      : {}),
    // So that the worker refuses to send more, rather than this scheduler closing its connection.
    maxMessageBytes: host.options.maxMessageBytes,
    ...wireVersion(),
  };
  comm.send(ok).catch(() => {});
  host.router.route(outcome.messages);
  host.logger.info(registeredFields(address, msg), "worker registered");
  logWorkerEvent(host, "add-worker", address);
  host.plugins.notify("addWorker", address);

  // The connection broke (not ended in order, nor cut here): the worker may live on.
  let broke = false;
  try {
    await forEachMessage(comm, (frame) => {
      // Removed (retired, restarted, silent too long): another worker may hold the address now.
      if (host.router.workers.get(address) !== stream) return;
      const msgs: unknown[] = Array.isArray(frame) ? frame : [frame];
      const events: SchedulerEvent[] = [];
      for (const msg of msgs) {
        // Not the state machine's: the profiles clients started here (clientProfiles.ts).
        if (isProfileNotice(msg)) {
          profileNotice(host, address, stream, msg);
          continue;
        }
        events.push({
          kind: "worker-message",
          worker: address,
          msg: msg as WorkerToSchedulerMessage,
        });
      }
      host.dispatch(events);
    });
  } catch (err) {
    const oversized = oversizedMessageRecord(err, `the worker at ${address}`, comm.peerAddress);
    broke = !(err instanceof CommAbortedError);
    // Aborted by the scheduler itself (a worker that missed its heartbeats): expected.
    if (err instanceof CommAbortedError) {
      host.logger.debug({ worker: address }, "closed the connection of a removed worker");
    } else if (oversized !== null) {
      host.logger.warn({ worker: address, ...oversized.fields }, oversized.message);
    } else {
      // A worker killed or its machine gone: expected, said in one line without the stack.
      logBrokenConnection(
        host.logger,
        "warn",
        { worker: address },
        err,
        "the connection to a worker broke",
      );
    }
  }
  stream.abort();
  host.router.leavingEnded(address, stream);
  // Still ours unless the worker was removed already (retired, restarted, missed heartbeats).
  if (host.router.workers.get(address) !== stream) return;
  host.router.workers.delete(address);
  // Killed, its machine gone: the profile-ended of the profile it kept never comes.
  host.clientProfiles.workerLeft(address);
  if (!host.isRunning) return;
  logWorkerLoss(
    host.logger,
    "info",
    address,
    "worker left",
    workerLoss(host.state, address, (c) => host.workerClients.workerOf(c)),
  );
  logWorkerEvent(host, "remove-worker", address);
  host.plugins.notify("removeWorker", address);
  // Its connection broke (a frozen worker that stopped reading, one cut off): it may
  // live on, holding its tasks' clients open. Not one that closed it in order: it
  // closes its clients itself, and their last messages may still be on their way.
  if (broke) host.workerClients.letGo(address);
  host.dispatch([
    {
      kind: "remove-worker",
      worker: address,
      expected: false,
      stimulusId: newStimulusId("worker-left"),
    },
  ]);
}

/**
 * What "worker registered" says of a worker: with its name, nanny, resources and memory
 * limit, as Dask's `Register worker <WorkerState …, name: …>` names it: the address alone
 * did not tell which `--name node-3` had joined, nor with what. Plain values only (the
 * resources as `weft worker --resources` takes them), which `weft logs` keeps.
 */
function registeredFields(address: string, msg: RegisterWorkerMsg): Record<string, unknown> {
  const resources = resourcesText(msg.resources ?? {});
  return {
    worker: address,
    // Not `name`: pino's records give that field to the logger's name.
    ...(msg.name === undefined ? {} : { workerName: msg.name }),
    nthreads: msg.nthreads,
    ...(msg.nanny === true ? { nanny: true } : {}),
    ...(resources === "" ? {} : { resources }),
    ...(msg.memoryLimit === undefined ? {} : { memoryLimit: msg.memoryLimit }),
  };
}
