/** What a worker's or a client's session needs of the scheduler server. */

import type { Logger } from "pino";
import { BatchedSend, type BatchedSendOptions } from "../comm/batchedSend.ts";
import { logBrokenConnection } from "../comm/brokenConnection.ts";
import type { Comm } from "../comm/comm.ts";
import { MessageTooLargeError } from "../comm/errors.ts";
import type { NannyPluginSpec, WorkerPluginSpec } from "../protocol/messagesSession.ts";
import type { UploadedFile } from "../protocol/uploads.ts";
import type { LogRecords } from "../util/logRecords.ts";
import type { CpuProfiler } from "../worker/profiler.ts";
import type { AmmControl } from "./ammControl.ts";
import type { ClientProfiles } from "./clientProfiles.ts";
import type { Coordination } from "./coordination/coordination.ts";
import type { Counters } from "./counters.ts";
import type { EventBroker } from "./events.ts";
import type { Metadata } from "./metadata.ts";
import type { SchedulerPlugins } from "./plugins.ts";
import type { PubSubBroker } from "./pubsub.ts";
import type { Router } from "./router.ts";
import type { SchedulerCode } from "./schedulerCode.ts";
import type { ResolvedSchedulerOptions } from "./schedulerOptions.ts";
import type { SchedulerEvent } from "./state/events.ts";
import type { SchedulerState } from "./state/schedulerState.ts";
import type { StimulusRunner } from "./stimulusRunner.ts";
import type { TaskStream } from "./taskStream.ts";
import type { WorkerClients } from "./workerClients.ts";

/** The scheduler server as its sessions see it. */
export interface SessionHost {
  /** The address clients and workers reach it at. */
  readonly address: string;
  /** The server's options, defaults filled in. */
  readonly options: ResolvedSchedulerOptions;
  /** The scheduler state machine. */
  readonly state: SchedulerState;
  /** Sends the state machine's messages to the workers' and clients' connections. */
  readonly router: Router;
  /** Feeds stimuli to the state machine, rejecting malformed ones. */
  readonly runner: StimulusRunner;
  /** What the server has counted (the `counters` request). */
  readonly counters: Counters;
  /** The server's logger. */
  readonly logger: Logger;
  /** True until the server closes or fails. */
  readonly isRunning: boolean;
  /**
   * Aborted as the server closes or fails: what a session dials (a worker's reach
   * check) ends then, rather than holding the close until its timeout.
   */
  readonly closing: AbortSignal;
  /** The task modules clients loaded into the cluster, in order: told to each worker that registers. */
  readonly taskModules: string[];
  /** The files clients uploaded into the cluster, in order: given to each worker that registers. */
  readonly uploads: UploadedFile[];
  /** The worker plugins clients registered, in order: set up by each worker that registers. */
  readonly workerPlugins: WorkerPluginSpec[];
  /** The nanny plugins clients registered, in order: handed to each worker with a nanny that registers. */
  readonly nannyPlugins: NannyPluginSpec[];
  /** The task runs the workers reported, for `Client.getTaskStream`. */
  readonly taskStream: TaskStream;
  /** The last records the scheduler logged, for `Client.getSchedulerLogs`. */
  readonly logRecords: LogRecords;
  /** The cluster's metadata (`Client.setMetadata`, `getMetadata`). */
  readonly metadata: Metadata;
  /** Structured events by topic (`Client.logEvent`, `getEvents`, `subscribeTopic`). */
  readonly events: EventBroker;
  /** Publish–subscribe by name (`Client.pub`, `Client.sub`). */
  readonly pubsub: PubSubBroker;
  /** The coordination primitives clients use (semaphores, events, variables, queues). */
  readonly coordination: Coordination;
  /** The clients of the workers' tasks, by worker: let go with a worker removed unasked. */
  readonly workerClients: WorkerClients;
  /** The scheduler plugins, told of workers and clients coming and going. */
  readonly plugins: SchedulerPlugins;
  /** The task functions clients run on the scheduler, and the plugins they make with them. */
  readonly code: SchedulerCode;
  /** CPU profiles of the scheduler's thread, on demand (`Client.profile` with `scheduler: true`). */
  readonly profiler: CpuProfiler;
  /** The profiles clients started on the workers: discarded with their client. */
  readonly clientProfiles: ClientProfiles;
  /** The Active Memory Manager's rounds, which clients start, stop and run once (`client.amm`). */
  readonly amm: AmmControl;
  /** Hand stimuli to the state machine and route what it returns. */
  dispatch(events: SchedulerEvent[]): void;
  /**
   * Tell every worker to close, then close (soon: an answer sent now still
   * leaves): the addresses of the workers told.
   */
  shutdownCluster(): string[];
}

/** What a session's stream tells its session of (see {@link sessionStream}). */
export interface SessionStreamHooks {
  /**
   * Told of a message that cannot be sent (larger than the peer's
   * `maxMessageBytes` or the scheduler's, or not encodable), dropped: the
   * session may send something in its place. True if that is the message's
   * whole content in smaller messages (halves of its keys): nothing was lost,
   * and the log says so at info rather than a drop at warn.
   */
  readonly onDropped?: (msg: unknown, err: unknown) => boolean | undefined;
  /** Told of each message as it is queued on the stream. */
  readonly onQueued?: (msg: unknown) => void;
  /**
   * Whether the peer said it is leaving: a failed send is expected then (it
   * may have closed its end already), logged at debug, not warn.
   */
  readonly peerLeaving?: () => boolean;
  /** Told of each batch the transport took (see `BatchedSendOptions.onTaken`). */
  readonly onTaken?: (batch: readonly unknown[]) => void;
  /** Whether a message goes in a batch of its own (see `BatchedSendOptions.alone`). */
  readonly alone?: (msg: unknown) => boolean;
}

/** A session's batched stream: a `BatchedSend` telling its session of each message queued. */
class SessionStream extends BatchedSend {
  constructor(
    comm: Comm,
    options: BatchedSendOptions,
    private readonly onQueued: (msg: unknown) => void,
  ) {
    super(comm, options);
  }

  override send(...msgs: unknown[]): void {
    super.send(...msgs);
    for (const m of msgs) this.onQueued(m);
  }
}

/**
 * The batched stream to a session's peer (`{worker: address}` or `{client:
 * id}` in the logs). A failed send is logged and ends the stream; one message
 * that cannot be sent is dropped (and said so, and `onDropped` is told) and the
 * stream goes on. Such a message is logged at warn when it is larger than the
 * limit the peer said it takes (its configuration), at error otherwise.
 */
export function sessionStream(
  host: SessionHost,
  comm: Comm,
  peer: { readonly worker: string } | { readonly client: string },
  { onDropped, onQueued, peerLeaving, onTaken, alone }: SessionStreamHooks = {},
): BatchedSend {
  const kind = "worker" in peer ? "worker" : "client";
  const options: BatchedSendOptions = {
    intervalMs: host.options.batchedSendIntervalMs,
    onTaken,
    ...(alone !== undefined ? { alone } : {}),
    onError: (err) => {
      const msg = `cannot send to a ${kind}`;
      if (peerLeaving?.() === true) host.logger.debug({ err, ...peer }, msg);
      // Its process killed: one line, the transport's stack at debug.
      else logBrokenConnection(host.logger, "warn", peer, err, msg);
    },
    onMessageError: (err, m) => {
      const op = (m as { op?: unknown } | null)?.op;
      if (onDropped?.(m, err) === true) {
        host.logger.info(
          { ...peer, op, reason: (err as Error).message },
          `a message too large for a ${kind} goes again in halves`,
        );
        return;
      }
      const level = err instanceof MessageTooLargeError && err.whose !== null ? "warn" : "error";
      host.logger[level](
        { err, ...peer, op },
        `dropped a message that cannot be sent to a ${kind}`,
      );
    },
  };
  return onQueued === undefined
    ? new BatchedSend(comm, options)
    : new SessionStream(comm, options, onQueued);
}
