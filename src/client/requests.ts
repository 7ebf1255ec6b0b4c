/**
 * The client's requests the scheduler answers under their stimulus id (the
 * `update-data` of a scatter, replicate, rebalance, retiring and restarting
 * workers, the datasets): an id no other request has, the wait for each
 * answer, and the error each fails with when it could not be sent. Apart from
 * the client: the matching of answers to waiters is one concern, shared by the
 * operations that make such requests.
 */

import type {
  DatasetPublishedMsg,
  DatasetUnpublishedMsg,
  DataUpdatedMsg,
  GetDatasetMsg,
  PublishDatasetMsg,
  RebalancedMsg,
  RebalanceMsg,
  ReplicatedMsg,
  ReplicateMsg,
  RestartedMsg,
  RestartMsg,
  RestartWorkersMsg,
  RetireWorkersMsg,
  UnpublishDatasetMsg,
  UpdateDataMsg,
  WorkersRestartedMsg,
  WorkersRetiredMsg,
} from "../protocol/messagesClient.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import {
  DatasetError,
  RebalanceError,
  ReplicateError,
  ScatterError,
  SchedulerReplyError,
} from "./errors.ts";
import { PendingAnswers } from "./pendingAnswers.ts";

/** The requests answered under their stimulus id (see {@link Requests.ask}). */
export type Request =
  | UpdateDataMsg
  | ReplicateMsg
  | RebalanceMsg
  | RetireWorkersMsg
  | RestartMsg
  | RestartWorkersMsg
  | PublishDatasetMsg
  | GetDatasetMsg
  | UnpublishDatasetMsg;

/** A dataset got: its value, with futures of this client made as the answer arrived. */
export interface ReceivedDataset {
  readonly op: "dataset";
  readonly found: boolean;
  readonly value: unknown;
  /** The keys this client held no future of before the answer made some. */
  readonly fresh?: readonly string[];
}

/** The answer to each {@link Request}, by op. */
interface AnswerTo {
  "update-data": DataUpdatedMsg;
  replicate: ReplicatedMsg;
  rebalance: RebalancedMsg;
  "retire-workers": WorkersRetiredMsg;
  restart: RestartedMsg;
  "restart-workers": WorkersRestartedMsg;
  "publish-dataset": DatasetPublishedMsg;
  "get-dataset": ReceivedDataset;
  "unpublish-dataset": DatasetUnpublishedMsg;
}

/** The answers to {@link Request}s. */
export type Answer = AnswerTo[Request["op"]];

/** The error of a {@link Request} that could not be sent, by op, from why. */
const UNSENT_REQUEST: { readonly [Op in Request["op"]]: (why: string) => Error } = {
  "update-data": (why) => new ScatterError(`scatter: ${why}`),
  replicate: (why) => new ReplicateError([], `replicate: ${why}`),
  rebalance: (why) => new RebalanceError([], `rebalance: ${why}`),
  "retire-workers": (why) => new Error(`retireWorkers: ${why}`),
  restart: (why) => new Error(`restart: ${why}`),
  "restart-workers": (why) => new Error(`restartWorkers: ${why}`),
  "publish-dataset": (why) => new DatasetError(`publishDataset: ${why}`),
  "get-dataset": (why) => new DatasetError(`getDataset: ${why}`),
  "unpublish-dataset": (why) => new DatasetError(`unpublishDataset: ${why}`),
};

/** The request each answer answers, by the answer's op (for `answer-unsent`). */
const REQUEST_OF: { readonly [Op in Answer["op"]]: Request["op"] } = {
  "data-updated": "update-data",
  replicated: "replicate",
  rebalanced: "rebalance",
  "workers-retired": "retire-workers",
  restarted: "restart",
  "workers-restarted": "restart-workers",
  "dataset-published": "publish-dataset",
  dataset: "get-dataset",
  "dataset-unpublished": "unpublish-dataset",
};

/** What {@link Requests} needs of its client. */
export interface RequestHost {
  /** The client's id, in every stimulus id it makes. */
  readonly id: string;
  /** Send `msg` to the scheduler, after the releases of keys pending. */
  send(msg: Request): void;
  /** Keep the process alive while an answer is awaited (see `PendingAnswers`). */
  holdLoop?: () => () => void;
}

/** The client's requests answered under their stimulus id, and those waiting for it. */
export class Requests {
  /** Requests made so far whose answer is matched by stimulus id. */
  private count = 0;
  private readonly answers: PendingAnswers<Answer>;

  constructor(private readonly host: RequestHost) {
    this.answers = new PendingAnswers<Answer>(host.holdLoop ?? null);
  }

  /**
   * A stimulus id no other request has, for requests whose answer is matched
   * by it (plain stimulus ids repeat within a millisecond, and across clients).
   */
  stimulusId(prefix: string): string {
    return `${newStimulusId(prefix)}-${this.host.id}-${++this.count}`;
  }

  /**
   * Send `msg`, a request the scheduler answers under its (unique) stimulus
   * id, after the releases pending, and wait for the answer.
   */
  ask<R extends Request>(msg: R): Promise<AnswerTo[R["op"]]> {
    const answered = this.answers.wait(msg.stimulusId);
    this.host.send(msg);
    return answered as Promise<AnswerTo[R["op"]]>;
  }

  /** The answer to `stimulusId` came: true if a request was waiting for it. */
  answer(stimulusId: string, answer: Answer): boolean {
    return this.answers.answer(stimulusId, answer);
  }

  /** The request `stimulusId` will not be answered: it fails with `err`. */
  fail(stimulusId: string, err: Error): void {
    this.answers.fail(stimulusId, err);
  }

  /** Every request waiting fails with `err` (the client closed). */
  failAll(err: Error): void {
    this.answers.failAll(err);
  }

  /**
   * The scheduler could not send its answer (of op `answer`) to the request
   * `stimulusId` (`answer-unsent`): the request fails with `why`, as one that
   * could not be sent does.
   */
  answerUnsent(answer: string, stimulusId: string, why: string): void {
    const request = Object.hasOwn(REQUEST_OF, answer)
      ? REQUEST_OF[answer as Answer["op"]]
      : undefined;
    this.answers.fail(
      stimulusId,
      request === undefined ? new Error(why) : UNSENT_REQUEST[request](why),
    );
  }

  /**
   * The scheduler refused the request `stimulusId` (of op `op`) as malformed
   * (`message-refused`): it fails with the scheduler's reason.
   */
  refused(op: string, stimulusId: string, why: string): void {
    this.answers.fail(stimulusId, new SchedulerReplyError(op, why));
  }

  /**
   * `msg` could not be sent to the scheduler, for `err`: if it is a request,
   * it fails saying so (it would wait forever), and this is true.
   */
  unsent(msg: unknown, err: Error): boolean {
    const op = (msg as { op?: unknown } | null)?.op;
    const unsent =
      typeof op === "string" && Object.hasOwn(UNSENT_REQUEST, op)
        ? UNSENT_REQUEST[op as Request["op"]]
        : undefined;
    if (unsent === undefined) return false;
    const { stimulusId } = msg as Request;
    this.answers.fail(stimulusId, unsent(`the scheduler could not be told: ${err.message}`));
    return true;
  }
}
