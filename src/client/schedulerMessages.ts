/**
 * What the client does with each message of the scheduler: news of its keys
 * (in memory, erred, cancelled, lost, waiting for a worker) applied to their
 * records, answers handed to the requests waiting, events and published
 * messages delivered to their subscribers. Apart from the client: a dispatch
 * on the message's op, which needs of the client only the parts each message
 * goes to (see {@link MessageHost}).
 */

import type { Logger } from "pino";
import type { ServerToClientMessage } from "../protocol/messagesSession.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import type { Cancels } from "./cancels.ts";
import type { ClientDatasets } from "./clientDatasets.ts";
import { NoWorkerError, RemoteTaskError } from "./errors.ts";
import type { Subscriptions } from "./events.ts";
import type { KeyRecord } from "./keyRecord.ts";
import type { PubSubSubscriptions } from "./pubsub.ts";
import type { Requests } from "./requests.ts";
import type { Submissions } from "./submissions.ts";

/** What {@link SchedulerMessages} needs of its client. */
export interface MessageHost {
  /** The record of `key`, if the client holds a future of it. */
  record(key: string): KeyRecord | undefined;
  /** The client's connections to workers: closed to those no longer holding a result. */
  readonly peers: Pick<PeerPool, "remove">;
  readonly cancels: Pick<Cancels, "cancelled" | "refused">;
  readonly requests: Pick<Requests, "answer" | "answerUnsent" | "refused">;
  /** The client's graphs submitted: those refused fail their futures. */
  readonly submissions: Pick<Submissions, "refused">;
  readonly datasets: Pick<ClientDatasets, "receive" | "letGo">;
  /** The handlers of the topics subscribed to. */
  readonly subscriptions: Pick<Subscriptions, "deliver">;
  /** The client's `Sub`s. */
  readonly pubsub: Pick<PubSubSubscriptions, "deliver">;
  /** The scheduler failed: the client closes, with `message`. */
  schedulerFailed(message: string): void;
  readonly logger: Logger;
}

/** Handles the messages of the scheduler for a client. */
export class SchedulerMessages {
  constructor(private readonly host: MessageHost) {}

  /** A message from the scheduler; one that cannot be used is logged and skipped. */
  onMessage(msg: ServerToClientMessage): void {
    try {
      this.handle(msg);
    } catch (err) {
      const op = typeof msg === "object" && msg !== null ? (msg as { op?: unknown }).op : undefined;
      this.host.logger.error({ err, op }, "ignored a malformed message from the scheduler");
    }
  }

  private handle(msg: ServerToClientMessage): void {
    switch (msg.op) {
      case "key-in-memory": {
        const holders = "whoHas" in msg && Array.isArray(msg.whoHas) ? msg.whoHas : [];
        const rec = this.host.record(msg.key);
        if (rec === undefined) return;
        this.dropFormerHolders(rec, holders);
        rec.finish(holders, msg.typename);
        return;
      }
      case "task-erred": {
        const erred = this.host.record(msg.key);
        // An actor lost with its worker errs: calls in flight to that worker (frozen,
        // it keeps its connections open) end as network failures, not never.
        if (erred !== undefined && erred.holders.length > 0) this.dropFormerHolders(erred, []);
        erred?.fail(
          "error",
          new RemoteTaskError({
            key: msg.key,
            blame: msg.blame,
            exception: msg.exception,
            exceptionText: msg.exceptionText,
            tracebackText: msg.tracebackText,
          }),
        );
        return;
      }
      case "cancelled-keys":
        this.host.cancels.cancelled(msg);
        return;
      case "task-no-worker":
        this.host
          .record(msg.key)
          ?.fail("no-worker", new NoWorkerError(msg.key, msg.task, msg.reason));
        return;
      case "task-runnable": {
        const rec = this.host.record(msg.key);
        if (rec?.status === "no-worker" && (rec.error as NoWorkerError).task === msg.task) {
          rec.reset();
        }
        return;
      }
      case "lost-data":
      case "task-retried": {
        const rec = this.host.record(msg.key);
        if (rec === undefined) return;
        if (msg.op === "lost-data") this.dropFormerHolders(rec, []);
        rec.reset();
        return;
      }
      case "replicated":
      case "rebalanced":
      case "workers-retired":
      case "restarted":
      case "workers-restarted":
      case "data-updated":
      case "dataset-published":
      case "dataset-unpublished":
        this.host.requests.answer(msg.stimulusId, msg);
        return;
      case "dataset":
        this.host.datasets.receive(msg);
        return;
      case "answer-unsent":
        // The scheduler could not send the answer (too large for this client, say): fail the wait.
        this.host.requests.answerUnsent(msg.answer, msg.stimulusId, msg.error);
        if (Array.isArray(msg.keys)) this.host.datasets.letGo(msg.keys);
        return;
      case "message-refused":
        // A client bug: logged, as the wait it fails may be nobody's (a release, say).
        this.host.logger.warn(
          { op: msg.refused, reason: msg.error, stimulusId: msg.stimulusId },
          "the scheduler refused a message of this client as malformed",
        );
        // Refused as malformed, so never answered: fail the wait for it.
        if (msg.refused === "cancel-keys") this.host.cancels.refused(msg.stimulusId, msg.error);
        else if (msg.refused === "update-graph") {
          // Nothing else will be said of its keys: their futures would wait forever.
          this.host.submissions.refused(msg.stimulusId, msg.error);
        } else this.host.requests.refused(msg.refused, msg.stimulusId, msg.error);
        return;
      case "scheduler-failed":
        this.host.schedulerFailed(msg.message);
        return;
      case "event":
        this.host.subscriptions.deliver(msg.topic, msg.event);
        return;
      case "pubsub-msg":
        this.host.pubsub.deliver(msg.name, msg.msg);
        return;
      case "reply":
        return;
      default:
        this.host.logger.warn({ op: (msg as { op?: unknown }).op }, "ignored an unknown message");
    }
  }

  /**
   * The scheduler no longer names some of the workers `rec`'s result was on
   * (lost, e.g. removed for going silent): a fetch from one of them may never be
   * answered (a frozen process keeps its connections open), so close the
   * connections to them; fetches on them fail as network failures and are tried
   * again where the result is now.
   */
  private dropFormerHolders(rec: KeyRecord, holders: readonly string[]): void {
    for (const former of rec.holders) {
      if (!holders.includes(former)) {
        this.host.peers.remove(
          former,
          `the scheduler no longer names ${former} as a holder of ${rec.key}`,
        );
      }
    }
  }
}
