/**
 * What the simulated shells share: the clock, the network, the random
 * source, the counters and the routing between machines.
 */

import type { WorkerToSchedulerMessage } from "../protocol/messagesWorker.ts";
import type { EventQueue } from "./eventQueue.ts";
import type { HookContext } from "./hooks.ts";
import type { Network } from "./network.ts";
import type { ResolvedSimOptions } from "./options.ts";
import type { ReplicateLedger } from "./replicateLedger.ts";
import type { SimRng } from "./rng.ts";
import type { ScatterLedger } from "./scatterLedger.ts";
import type { SimWorker } from "./simWorker.ts";
import type { SimStats } from "./stats.ts";
import type { Workload } from "./workload.ts";

/** The scheduler's address in the simulated network. */
export const SCHEDULER_ADDRESS = "tcp://10.0.255.1:8786";

/** The services a simulated shell uses. */
export interface SimCluster {
  /** The run's options, defaults filled in. */
  readonly options: ResolvedSimOptions;
  /** The tasks the client submits. */
  readonly workload: Workload;
  /** The events on virtual time. */
  readonly queue: EventQueue;
  /** The simulated network. */
  readonly net: Network;
  /** The one random source of the run. */
  readonly rng: SimRng;
  /** The run's counters. */
  readonly stats: SimStats;
  /** What the run's hooks may look at. */
  readonly hookContext: HookContext;
  /** Measure the time spent in the state machines. */
  readonly timing: boolean;
  /** The worker (alive or dead) at `address`. */
  worker(address: string): SimWorker | undefined;
  /** Live workers still connected to the scheduler, in start order. */
  healthyWorkers(): SimWorker[];
  /** Kill `w` (the death fault; a replacement starts after `replaceDelay`). */
  kill(w: SimWorker): void;
  /** True while faults strike: until the client has every result. */
  readonly injecting: boolean;
  /** The record of the scattered keys (the `scatter` workload), or null. */
  readonly scatter: ScatterLedger | null;
  /** The record of the client's `replicate` requests (the `scatter` workload), or null. */
  readonly replicas: ReplicateLedger | null;
  /** Send `msg` from the worker at `from` to the scheduler, in order on that connection. */
  toScheduler(from: string, msg: WorkerToSchedulerMessage, periodic?: boolean): void;
  /**
   * The scheduler removed the worker `w` and closed its stream: a live,
   * connected worker exits on noticing, and is replaced.
   */
  streamClosed(w: SimWorker): void;
  /**
   * The scheduler retired `w` (`close-worker` arrived): it closes, its data
   * held elsewhere, and a replacement starts after `replaceDelay`.
   */
  closeRetired(w: SimWorker): void;
  /** A unique stimulus id starting with `prefix`. */
  stimulusId(prefix: string): string;
  /** Note that the cluster made progress (a task ran, data arrived, the client heard news). */
  progress(): void;
  /** Note an error message the simulation made a task throw. */
  injectedError(key: string, text: string): void;
  /** Note an error message the simulation made a fetch of `key` from a peer fail with. */
  injectedFetchError(key: string, text: string): void;
  /**
   * `reader` read the number `v` of `key` (a task its input, the client a result
   * it was told of): a wrong one fails the run as it is read, for a wrong value
   * released before the run ends is otherwise never seen.
   */
  checkRead(reader: string, key: string, v: number): void;
  /** True if task `key` of the workload is an actor. */
  isActor(key: string): boolean;
  /** Note that the worker at `address` holds the actor `key` (its task ran there). */
  actorHeld(key: string, address: string): void;
}
