/**
 * Workers joining, pausing, resuming and leaving (Dask's `add_worker`,
 * `handle_worker_status_change` and `remove_worker`).
 */

import type { RegisterWorkerMsg } from "../../protocol/messagesWorker.ts";
import { comparePriority } from "../../util/priority.ts";
import { isLostActor, removeReplica } from "./bookkeeping.ts";
import { InvalidStimulus } from "./errors.ts";
import { mayRunOn } from "./placement.ts";
import { replicatorLeft } from "./replicate.ts";
import type { SchedulerState } from "./schedulerState.ts";
import type { TaskState } from "./taskState.ts";
import { WorkerInfo } from "./workerInfo.ts";

/**
 * Recommend `processing` for the `no-worker` tasks `ws` may run, best priority
 * processed first (Dask's `bulk_schedule_unrunnable_after_adding_worker`).
 */
function scheduleUnrunnableOn(s: SchedulerState, ws: WorkerInfo): void {
  if (s.unrunnable.size === 0) return;
  const runnable: TaskState[] = [];
  for (const ts of s.unrunnable.keys()) {
    if (mayRunOn(ws, ts)) runnable.push(ts);
  }
  // The work list is last in, first out: recommend the worst priority first.
  runnable.sort((a, b) => comparePriority(b.priority, a.priority));
  for (const ts of runnable) s.recommend(ts, "processing");
}

/** The connected worker registered as `name`, if any (names are unique among them). */
export function workerNamed(s: SchedulerState, name: string): WorkerInfo | undefined {
  for (const ws of s.workers.values()) if (ws.name === name) return ws;
  return undefined;
}

/** Why a worker cannot register under `holder`'s name. */
export function nameTaken(holder: {
  readonly address: string;
  readonly name: string | null;
}): string {
  return `the name ${JSON.stringify(holder.name)} is taken by the worker at ${holder.address}`;
}

/** A worker as a batch of stimuli leaves it: its address and name. */
interface Registered {
  readonly address: string;
  readonly name: string | null;
}

/**
 * Refuses, before a batch of stimuli is handled, each `register-worker` that
 * `registerWorker` could not carry out, counting the workers the batch
 * registers and removes before it: a registration refused half-way through a
 * batch would leave the stimuli before it handled (their messages dropped),
 * which the shell would then hand the machine again.
 */
export class RegistrationCheck {
  /** Workers the batch registered so far, by address. */
  private readonly added = new Map<string, Registered>();
  /** Addresses of the connected workers the batch removed so far. */
  private readonly removed = new Set<string>();

  constructor(private readonly s: SchedulerState) {}

  /** The batch removes the worker at `address`. */
  remove(address: string): void {
    this.added.delete(address);
    this.removed.add(address);
  }

  /**
   * The batch registers `msg`: throws `InvalidStimulus` for an address already
   * taken, a name another worker has, a name that is another worker's address,
   * or an address that is another worker's name.
   */
  register(msg: RegisterWorkerMsg): void {
    const { address } = msg;
    const name = msg.name ?? null;
    if (this.find((w) => w.address === address) !== undefined) {
      throw new InvalidStimulus(`invalid register-worker: ${address} is already registered`);
    }
    const holder = name === null ? undefined : this.find((w) => w.name === name);
    if (holder !== undefined) {
      throw new InvalidStimulus(`invalid register-worker: ${nameTaken(holder)}`);
    }
    // A selector (`weft retire ADDRESS`, `workers=`) names a worker by address or by
    // name and would name both; Dask's aliases, where an unnamed worker's name is its
    // address, refuse the same.
    if (name !== null && name !== address && this.find((w) => w.address === name) !== undefined) {
      throw new InvalidStimulus(
        `invalid register-worker: the name ${JSON.stringify(name)} is the address of a worker`,
      );
    }
    const named = this.find((w) => w.name === address);
    if (named !== undefined) {
      throw new InvalidStimulus(
        `invalid register-worker: the address ${address} is the name of the worker at ${named.address}`,
      );
    }
    this.added.set(address, { address, name });
  }

  /** The first worker connected once the batch so far is handled that `test` accepts. */
  private find(test: (w: Registered) => boolean): Registered | undefined {
    for (const w of this.added.values()) if (test(w)) return w;
    for (const ws of this.s.workers.values()) {
      if (!this.removed.has(ws.address) && test(ws)) return ws;
    }
    return undefined;
  }
}

/**
 * `register-worker`: a worker joins. `handleStimuli` refused beforehand a
 * registration at a taken address or under a taken name (`RegistrationCheck`).
 */
export function registerWorker(s: SchedulerState, msg: RegisterWorkerMsg): void {
  // Without a prototype: a resource named like an Object member ("toString",
  // "constructor", "__proto__" from a decoded message) is declared only if
  // the worker declares it.
  const ws = new WorkerInfo(
    msg.address,
    msg.nthreads,
    Object.assign(Object.create(null) as Record<string, number>, msg.resources),
    s.workerCounter++,
    s.clock(),
    s.durations,
  );
  if (msg.memoryLimit !== undefined) ws.memoryLimit = msg.memoryLimit;
  ws.nanny = msg.nanny === true;
  if (msg.name !== undefined) ws.name = msg.name;
  s.workers.set(ws.address, ws);
  s.running.add(ws);
  s.totalNthreads += ws.nthreads;
  s.checkIdleSaturated(ws);
  scheduleUnrunnableOn(s, ws);
}

/** `worker-status-change`: a worker paused (gets no new tasks) or resumed. */
export function workerStatusChange(
  s: SchedulerState,
  ws: WorkerInfo,
  status: "running" | "paused",
): void {
  if (ws.status === status) return;
  ws.status = status;
  if (status === "running") {
    s.running.add(ws);
    s.checkIdleSaturated(ws);
    scheduleUnrunnableOn(s, ws);
  } else {
    s.running.delete(ws);
    s.checkIdleSaturated(ws);
  }
}

/**
 * A worker left (Dask's `remove_worker`). Its processing tasks go back to
 * `released` (and on to be rescheduled), or to `erred` with `KilledWorker`
 * once `allowedFailures` workers have died running them; the results only it
 * held, and the actors living on it, are released, and recomputed if still
 * needed (a wanted actor errs instead: see `memoryReleased`); the other workers are
 * told with `remove-worker` (unless `tellPeers` is false: they are all
 * leaving too). An unknown address is ignored.
 */
export function removeWorker(
  s: SchedulerState,
  address: string,
  expected: boolean,
  tellPeers = true,
): void {
  const ws = s.workers.get(address);
  if (ws === undefined) return;
  replicatorLeft(s, ws);
  s.workers.delete(address);
  s.running.delete(ws);
  s.idle.delete(ws);
  s.idleTaskCount.delete(ws);
  s.totalNthreads -= ws.nthreads;
  ws.status = "closed";
  s.workStealing.forgetWorker(ws);

  const processing = [...ws.processing.keys()];
  for (const ts of processing) {
    if (!expected) ts.suspicious++;
    if (!expected && ts.suspicious > s.options.allowedFailures) {
      const text =
        `KilledWorker: Attempted to run task '${ts.key}' on ${ts.suspicious} different ` +
        "workers, but all those workers died while running it. The last worker that " +
        `attempted to run the task was ${address}.`;
      s.transition(ts, "erred", {
        kind: "erred",
        worker: address,
        exception: { name: "KilledWorker", message: text },
        traceback: null,
        exceptionText: text,
        tracebackText: "",
      });
    } else {
      s.recommend(ts, "released");
    }
  }

  for (const ts of [...ws.hasWhat]) {
    removeReplica(s, ts, ws);
    if (ts.whoHas.size === 0 || isLostActor(ts)) s.recommend(ts, "released");
  }

  // As Dask: the peers hear of the removal after its consequences are sent.
  s.processRecommendations();
  if (!tellPeers) return;
  for (const other of s.workers.values()) {
    s.sendToWorker(other, { op: "remove-worker", worker: address, stimulusId: s.stimulusId });
  }
}
