/**
 * One client's connection: the `register-client` handshake (the client's
 * own `maxMessageBytes`, if it says one, is applied to what is sent it), then
 * the client's batched stream: its messages become stimuli (a client speaks
 * only for itself: a message without a clientId, or naming another client, is
 * rejected), its requests are answered (an answer that cannot be sent, by an
 * error saying why: `unsentToClient.ts`), and when the connection ends the
 * state machine is told the client closed.
 */

import type { BatchedSend } from "../comm/batchedSend.ts";
import { logBrokenConnection } from "../comm/brokenConnection.ts";
import type { Comm } from "../comm/comm.ts";
import { CommAbortedError } from "../comm/errors.ts";
import { forEachMessage } from "../comm/forEachMessage.ts";
import type { ClientToSchedulerMessage } from "../protocol/messagesClient.ts";
import { type RegisterReplyMsg, receiveLimitProblem } from "../protocol/messagesSession.ts";
import { protocolMismatch, wireVersion } from "../protocol/version.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { AnswerBacklog, isAnsweredMessage, isLargeAnswer } from "./answerBacklog.ts";
import { isRequestOp, replyTo } from "./clientRequests.ts";
import { oversizedMessageRecord } from "./oversizedMessage.ts";
import { type SessionHost, sessionStream } from "./sessionHost.ts";
import { isStandInClientId } from "./state/clientInfo.ts";
import type { SchedulerEvent } from "./state/events.ts";
import { RequestOps, standInsFor } from "./unsentToClient.ts";

async function refuse(host: SessionHost, comm: Comm, why: string): Promise<void> {
  host.logger.warn({ peer: comm.peerAddress, reason: why }, "refused a client");
  const reply: RegisterReplyMsg = {
    op: "register-client-reply",
    status: "error",
    message: why,
    ...wireVersion(),
  };
  try {
    await comm.send(reply);
  } catch {
    // the client is gone already
  }
  await comm.close();
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** What is wrong with the `clientId` of a message from a client whose id it is not. */
function clientIdProblem(claimed: unknown): string {
  if (claimed === undefined) return "clientId is missing";
  if (typeof claimed !== "string" || claimed === "") return "clientId must be a non-empty string";
  return "a client may only speak for itself";
}

/** Send on a `pubsub-put` (not answered: a malformed one is counted and logged). */
function putMessage(host: SessionHost, client: string, msg: Record<string, unknown>): void {
  if (typeof msg.name !== "string" || msg.name === "" || !("msg" in msg)) {
    host.counters.rejectedMessages++;
    host.logger.error(
      { client, op: msg.op },
      "rejected a malformed message: pubsub-put needs a non-empty name and a msg",
    );
    return;
  }
  host.pubsub.put(msg.name, msg.msg);
}

/**
 * Discard the CPU profiles client `id`, removed, started and did not stop: on the
 * scheduler, and on the workers still keeping them (see clientProfiles.ts).
 */
function discardProfilesOf(host: SessionHost, id: string): void {
  host.profiler.discardOwnedBy(id);
  for (const [worker, profile] of host.clientProfiles.clientLeft(id)) {
    const stream = host.router.workers.get(worker);
    if (stream !== undefined && !stream.isClosed)
      stream.send({ op: "profile-discard", id: profile });
  }
}

/**
 * Serve the client whose first message, `first`, is a `register-client`.
 * Resolves once its connection has ended.
 */
export async function serveClient(
  host: SessionHost,
  comm: Comm,
  first: Record<string, unknown>,
): Promise<void> {
  // First: a client of another version may not even give its id the same way.
  const mismatch = protocolMismatch("the client", "this scheduler", first);
  if (mismatch !== null) return refuse(host, comm, mismatch);
  const id = first.clientId;
  if (typeof id !== "string" || id === "") {
    return refuse(host, comm, "register-client must give a clientId");
  }
  if (isStandInClientId(id)) return refuse(host, comm, `client id ${id} is reserved`);
  if (host.router.clients.has(id)) return refuse(host, comm, `client ${id} is already connected`);
  // So that a message larger than the client takes fails here, rather than its reader
  // closing the connection on it.
  const ownLimit = first.maxMessageBytes;
  const badLimit = receiveLimitProblem("register-client", ownLimit);
  if (badLimit !== null) return refuse(host, comm, badLimit);
  if (typeof ownLimit === "number") {
    comm.limitSendsTo?.(ownLimit, `the maxMessageBytes of client ${id}`);
  }
  const worker = first.worker;
  if (worker !== undefined && (typeof worker !== "string" || worker === "")) {
    return refuse(host, comm, "register-client: worker must be a non-empty worker address");
  }
  // Once the client said close-client, its connection may end under a send or a read: expected.
  let saidGoodbye = false;
  const ops = new RequestOps();
  const backlog = new AnswerBacklog();
  const stream: BatchedSend = sessionStream(
    host,
    comm,
    { client: id },
    {
      peerLeaving: () => saidGoodbye,
      onQueued: (m) => {
        ops.queued(m);
        backlog.queued(m);
      },
      onTaken: (batch) => backlog.taken(batch),
      alone: (m) => isLargeAnswer(m, ops.of(m as object)),
      // In place of what cannot be sent, what keeps the client from waiting for it forever.
      onDropped: (m, err) => {
        const { messages, whole } = standInsFor(id, m, err, ops);
        if (messages.length > 0 && !stream.isClosed) stream.send(...messages);
        return whole;
      },
    },
  );
  host.router.clients.set(id, stream);
  if (worker !== undefined) host.workerClients.add(worker, id, (err) => comm.abort(err));
  const ok: RegisterReplyMsg = {
    op: "register-client-reply",
    status: "OK",
    // So that the client refuses to send more, rather than this scheduler closing its connection.
    maxMessageBytes: host.options.maxMessageBytes,
    // So that the client refreshes its leases in time; null: they never expire.
    leaseTimeoutMs: Number.isFinite(host.options.leaseTimeoutMs)
      ? host.options.leaseTimeoutMs
      : null,
    ...wireVersion(),
  };
  comm.send(ok).catch(() => {});
  host.logger.debug({ client: id }, "client connected");
  host.plugins.notify("addClient", id);

  // Nothing waits for the client's answers to be taken once its connection is gone.
  void comm.closed.then(() => backlog.close());
  /**
   * Handle `msgs`, a frame of the client's, from `start` on. A request that
   * finds the client's answers in flight at their bound waits, and every
   * message after it (so that none overtakes it): the promise returned, which
   * the reading awaits, so that the client's further frames stay unread.
   */
  const handle = (msgs: readonly unknown[], start: number): Promise<void> | undefined => {
    let events: SchedulerEvent[] = [];
    for (let i = start; i < msgs.length; i++) {
      const msg = msgs[i];
      if (isRecord(msg) && isRequestOp(msg.op)) {
        // Answer after what came before it, so that it sees its effects.
        host.dispatch(events);
        events = [];
        if (backlog.full) {
          return backlog.whenRoom().then(() => handle(msgs, i));
        }
        // The connection gone, the requests it left are still read for their effects: a
        // dump has none, and made for nobody, a thousand of them took the scheduler to 2.5 GiB.
        if (msg.op === "dump-state" && stream.isClosed) continue;
        ops.asked(msg);
        backlog.asked(msg);
        const reply = replyTo(host, id, msg);
        if (reply !== null && !stream.isClosed) stream.send(reply);
      } else if (isRecord(msg) && msg.op === "pubsub-put") {
        putMessage(host, id, msg);
      } else if (isRecord(msg) && msg.clientId !== id) {
        host.counters.rejectedMessages++;
        host.logger.error(
          { client: id, op: msg.op, claimed: msg.clientId },
          `rejected a malformed message: ${clientIdProblem(msg.clientId)}`,
        );
      } else {
        // Its answer counts as a request's: it waits its turn as one, handled at once.
        const answered = isRecord(msg) && isAnsweredMessage(msg);
        if (answered) {
          host.dispatch(events);
          events = [];
          if (backlog.full) return backlog.whenRoom().then(() => handle(msgs, i));
        }
        if (isRecord(msg) && msg.op === "close-client") saidGoodbye = true;
        // A queue item's taker lets its dataset go so: the scheduler need not at its leaving.
        if (isRecord(msg) && msg.op === "unpublish-dataset" && typeof msg.name === "string") {
          host.coordination.datasetGone(msg.name);
        }
        // The dataset of a value about to be set or put: its client's to let go until then.
        if (isRecord(msg) && msg.op === "publish-dataset" && typeof msg.name === "string") {
          host.coordination.datasetPublished(msg.name, id);
        }
        events.push({ kind: "client-message", msg: msg as ClientToSchedulerMessage });
        if (answered) {
          host.dispatch(events);
          events = [];
        }
      }
    }
    host.dispatch(events);
    return undefined;
  };

  try {
    await forEachMessage(comm, (frame) => handle(Array.isArray(frame) ? frame : [frame], 0));
  } catch (err) {
    const oversized = oversizedMessageRecord(err, `client ${id}`, comm.peerAddress);
    if (oversized !== null) {
      host.logger.warn({ client: id, ...oversized.fields }, oversized.message);
    } else if (err instanceof CommAbortedError && !host.isRunning) {
      // Cut by the scheduler's close, the streams' wait over (close(0): at once): expected.
      host.logger.debug(
        { client: id },
        "cut off the connection of a client at the scheduler's close",
      );
    } else if (err instanceof CommAbortedError && worker !== undefined) {
      // Cut here, its worker removed (workerClients.ts): expected.
      host.logger.info({ client: id, worker }, "let go of the client of a removed worker");
    } else {
      const msg = "the connection to a client broke";
      // A client's process crashing: expected, said in one line without the stack.
      if (saidGoodbye) host.logger.debug({ err, client: id }, msg);
      else logBrokenConnection(host.logger, "warn", { client: id }, err, msg);
    }
  }
  stream.abort();
  if (worker !== undefined) host.workerClients.delete(worker, id);
  if (host.router.clients.get(id) !== stream) return;
  host.router.clients.delete(id);
  const orphaned = host.coordination.clientLeft(id);
  host.events.clientLeft(id);
  host.pubsub.clientLeft(id);
  discardProfilesOf(host, id);
  host.plugins.notify("removeClient", id);
  if (!host.isRunning) return;
  host.logger.debug({ client: id }, "client left");
  const stimulusId = newStimulusId("client-left");
  host.dispatch([
    // The futures of queue puts dropped with the client, and of the items it took and did
    // not let go: nobody else lets them go.
    ...orphaned.map((name) => ({
      kind: "client-message" as const,
      msg: { op: "unpublish-dataset" as const, name, clientId: id, stimulusId },
    })),
    { kind: "client-message", msg: { op: "close-client", clientId: id, stimulusId } },
  ]);
}
