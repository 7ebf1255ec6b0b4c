import type { WorkerRecipient } from "../../protocol/messages.ts";
import type { SpilledValues } from "../../protocol/messagesWorker.ts";
import { addressHostOrNull } from "../../util/address.ts";
import type { Durations } from "./durations.ts";
import { currentOccupancy } from "./occupancy.ts";
import type { OpenFreeKeys } from "./outbox.ts";
import type { TaskState } from "./taskState.ts";

/** A worker's status as the scheduler sees it. Only `running` workers get new tasks. */
export type WorkerStatus = "running" | "paused" | "closed";

/**
 * The scheduler's bookkeeping for one worker (Dask's `distributed.scheduler.WorkerState`;
 * not to be confused with the worker's own state machine).
 *
 * Fields are public for this package's transitions and validation; nothing
 * else may mutate them.
 */
export class WorkerInfo {
  /** The worker's address, its identity. */
  readonly address: string;
  /** Size of its thread pool. */
  readonly nthreads: number;
  /** `{resource: amount}` it supplies. */
  readonly resources: Readonly<Record<string, number>>;
  /** `{resource: amount}` held by its processing tasks (no prototype: any name is a resource). */
  readonly usedResources: Record<string, number> = Object.create(null);
  /** Registration order; breaks placement ties deterministically. */
  readonly index: number;
  /** The envelope address for messages to this worker, shared by all of them. */
  readonly recipient: WorkerRecipient;
  /** Running, paused, or closed (removed). */
  status: WorkerStatus = "running";

  /**
   * Tasks assigned to it, each with the duration expected when it was assigned
   * (sent in its `compute-task`; 0 once it seceded). `occupancy` counts each at
   * its function's current expected duration instead.
   */
  readonly processing: Map<TaskState, number> = new Map();
  /** Processing tasks that seceded from the thread pool; a subset of `processing`. */
  readonly longRunning: Set<TaskState> = new Set();
  /** Tasks whose results it holds. */
  readonly hasWhat: Set<TaskState> = new Set();
  /**
   * The actor tasks processing here or whose object lives here (Dask's
   * `WorkerState.actors`): one joins when it starts processing here, stays when
   * it finishes here, and leaves when it stops processing otherwise or its
   * result is dropped or lost. Not the handles it fetched (as inputs of its
   * tasks) to actors living elsewhere: those are in `hasWhat` as replicas.
   * Placement spreads actors by its size.
   */
  readonly actors: Set<TaskState> = new Set();
  /** Total size of the results it holds. */
  nbytes = 0;
  /**
   * Its processing tasks that have not seceded, by function (Dask's
   * `WorkerState.task_prefix_count`): what its occupancy sums over.
   */
  readonly countsByFn: Map<string, number> = new Map();
  /** Its processing tasks not seceded whose spec names no function. */
  unnamedCount = 0;
  /** Its occupancy as last summed, valid while `occupancyEpoch` is `durations.epoch`. */
  occupancySum = 0;
  /** The `durations.epoch` `occupancySum` was summed at. */
  occupancyEpoch = 0;
  /** The scheduler's expected durations, which its occupancy counts its tasks at. */
  readonly durations: Durations;

  /**
   * Expected seconds of work assigned to it: its processing tasks that have not
   * seceded, each at its function's current expected duration (see `occupancy.ts`).
   */
  get occupancy(): number {
    return currentOccupancy(this);
  }
  /** `clock()` at its last message. */
  lastSeen: number;
  /** Its `memoryLimit` in bytes, as it registered, or null for none. */
  memoryLimit: number | null = null;
  /** What it last said it keeps on disk (a worker with a `memoryLimit`), or null. */
  spilled: SpilledValues | null = null;
  /** The memory its monitor last measured, as its heartbeat said, or null. */
  memory: number | null = null;
  /** A nanny starts another worker in its place when the cluster restarts (it registered so). */
  nanny = false;
  /** The name it registered with (unique among the workers), or null. */
  name: string | null = null;

  /** Scratch for placement: bytes of the current task's inputs held here, valid when `scratchEpoch` matches. */
  scratchBytes = 0;
  /** Placement pass that last wrote `scratchBytes`. */
  scratchEpoch = 0;
  /** Placement pass that last found this worker valid for a task's restrictions. */
  validEpoch = 0;
  /** The `free-keys` last queued for it, while it is the last message queued for it (see `Outbox`). */
  openFreeKeys: OpenFreeKeys | null = null;
  /** {@link host}, once read. */
  private hostValue: string | null | undefined = undefined;

  /** The host its address is on (for `workers=` restrictions naming a host), or null if none can be read. */
  get host(): string | null {
    if (this.hostValue === undefined) this.hostValue = addressHostOrNull(this.address);
    return this.hostValue;
  }

  /** A running worker with nothing assigned. */
  constructor(
    address: string,
    nthreads: number,
    resources: Readonly<Record<string, number>>,
    index: number,
    now: number,
    durations: Durations,
  ) {
    this.address = address;
    this.durations = durations;
    this.nthreads = nthreads;
    this.resources = resources;
    this.index = index;
    this.lastSeen = now;
    this.recipient = { kind: "worker", address };
    for (const name of Object.keys(resources)) this.usedResources[name] = 0;
  }

  /** `<WorkerInfo 'address' status, processing: n, memory: n>`. */
  toString(): string {
    return `<WorkerInfo '${this.address}' ${this.status}, processing: ${this.processing.size}, memory: ${this.hasWhat.size}>`;
  }
}
