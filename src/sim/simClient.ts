/**
 * The simulated client: submits the workload in one `update-graph`, or in two
 * (the second, later, for the other half of the wanted keys, repeating the
 * tasks they share), sometimes releases or cancels a wanted key part-way,
 * sometimes fires and forgets one (`fire-and-forget`, then a release),
 * follows what the scheduler reports about each key it still wants, and in
 * the end releases everything. In the `scatter` workload it first scatters the
 * workload's scattered keys (`scatter.ts`), and submits the graph once the
 * scheduler has registered them; in half of those runs it also replicates some
 * keys (`replicate.ts`), and awaits the answers as it awaits its results.
 */

import type { GraphTask, SchedulerToClientMessage } from "../protocol/messagesClient.ts";
import { SCHEDULER_ADDRESS, type SimCluster } from "./cluster.ts";
import { SimFailure } from "./failure.ts";
import { SimReplicator } from "./replicate.ts";
import type { SimRng } from "./rng.ts";
import { needingAny, SimScatter } from "./scatter.ts";
import type { SimScheduler } from "./simScheduler.ts";
import { SimActorRef, SimValue, taskSpecOf } from "./values.ts";
import { neededTasks, type Workload } from "./workload.ts";

/** What the client last heard about a wanted key. */
export type KeyStatus = "pending" | "memory" | "erred" | "cancelled";

/** The error a client was told about. */
export interface ClientError {
  /** The key of the task that raised (the wanted key or one it depends on). */
  readonly blame: string;
  /** The error's text, as the client heard it. */
  readonly exceptionText: string;
}

/** The client's address (its id) in the simulated network. */
export const CLIENT_ID = "client-0";

/**
 * The reason the client gives itself for a wanted key it does not submit: it
 * needs scattered data the client knows is lost, and no task can be given it
 * (as the real client, whose failed scatter leaves no futures to submit with).
 */
export const WITHHELD = "not submitted: it needs scattered data the client knows is lost";

/** A client that wants the workload's wanted keys. */
export class SimClient {
  /** The latest news of each wanted key. */
  readonly status = new Map<string, KeyStatus>();
  /** The error reported for each erred wanted key. */
  readonly errors = new Map<string, ClientError>();
  /** Wanted keys the client released or cancelled part-way (and what the cancels took with them). */
  readonly released = new Set<string>();
  /** Wanted keys it fired and forgot (`fire-and-forget`, then released). */
  readonly fired: string[] = [];
  /** Stimulus ids of this client's `cancel-keys` not answered yet. */
  private readonly ownCancels = new Set<string>();
  /** The stimulus id of this client's `restart` not answered yet, or null. */
  private restarting: string | null = null;
  /** The stimulus ids of this client's `restart-workers` not answered yet. */
  private readonly restartingWorkers = new Set<string>();
  /** Wanted keys not yet in memory or erred. */
  private pending = 0;
  /** Messages received, by op. */
  readonly received: Record<string, number> = {};
  /** Why each wanted key the scheduler cancelled (not at this client's request) was cancelled, last. */
  readonly cancelReasons = new Map<string, string>();
  /** The scatter of the workload's scattered keys, if it has any. */
  private readonly scatterer: SimScatter | null;
  /** The `replicate` requests (the `scatter` workload), if any. */
  readonly replicator: SimReplicator | null;

  constructor(
    private readonly c: SimCluster,
    private readonly scheduler: SimScheduler,
    private readonly workload: Workload,
    /** Its own stream, so that runs without a cancel are the runs they were before cancels. */
    private readonly cancelRng: SimRng,
    /** The scatter's own stream (used only when the workload has scattered keys). */
    scatterRng?: SimRng,
    /** Replicate's own stream (likewise). */
    replicateRng?: SimRng,
    /** The stream choosing the rebalances, and the `replicate` requests for one copy (likewise). */
    kindRng?: SimRng,
    /** The stream choosing the keys fired and forgotten (`fire-and-forget`), and when. */
    private readonly fireRng?: SimRng,
    /** The stream choosing whether, and when, the client restarts the cluster. */
    private readonly restartRng?: SimRng,
    /** The stream choosing whether, when and which worker the client restarts alone. */
    private readonly restartWorkerRng?: SimRng,
  ) {
    for (const i of workload.wanted) this.status.set(workload.tasks[i].key, "pending");
    this.pending = this.status.size;
    this.scatterer =
      c.scatter !== null && scatterRng !== undefined
        ? new SimScatter(c, scheduler, CLIENT_ID, workload, scatterRng, c.scatter, () =>
            this.submitGraph(),
          )
        : null;
    this.replicator =
      c.replicas !== null && replicateRng !== undefined && kindRng !== undefined
        ? new SimReplicator(
            c,
            scheduler,
            CLIENT_ID,
            replicateRng,
            kindRng,
            c.replicas,
            (key) => this.release(key),
            (key) => this.status.has(key),
          )
        : null;
  }

  /** Wanted keys in memory or erred (as last reported), and all of them: for progress. */
  get progress(): { readonly done: number; readonly total: number } {
    return { done: this.status.size - this.pending, total: this.status.size };
  }

  /**
   * True once every wanted key is in memory or erred (as last reported), and
   * every `replicate` and `restart` request is answered.
   */
  get done(): boolean {
    return (
      this.pending === 0 &&
      (this.replicator?.pending ?? 0) === 0 &&
      this.restarting === null &&
      this.restartingWorkers.size === 0
    );
  }

  /** Scatter the scattered keys, if any, then {@link submitGraph}. */
  submit(): void {
    if (this.scatterer !== null) this.scatterer.start();
    else this.submitGraph();
  }

  /** Send the graph (in one or two batches) and maybe schedule a release. */
  private submitGraph(): void {
    const rng = this.c.rng;
    const wanted = this.workload.wanted;
    if (wanted.length > 1 && rng.chance(0.3)) {
      const cut = rng.range(1, wanted.length - 1);
      this.send(wanted.slice(0, cut));
      const later = wanted.slice(cut);
      this.c.queue.at(rng.uniform(0, 0.3), () => this.send(later));
    } else {
      this.send(wanted);
    }
    if (wanted.length > 1 && rng.chance(0.2)) {
      const key = this.workload.tasks[rng.pick(wanted)].key;
      this.c.queue.at(rng.uniform(0, 0.3), () => this.release(key));
    }
    const crng = this.cancelRng;
    if (crng.chance(0.1) && wanted.length > 0) {
      const key = this.workload.tasks[crng.pick(wanted)].key;
      const force = crng.chance(0.5);
      this.c.queue.at(crng.uniform(0, 0.3), () => this.cancel(key, force));
    }
    const frng = this.fireRng;
    if (frng !== undefined && wanted.length > 0 && frng.chance(this.c.options.fireAndForget)) {
      const key = this.workload.tasks[frng.pick(wanted)].key;
      this.c.queue.at(frng.uniform(0, 0.3), () => this.fireAndForget(key));
    }
    // Not with scattered values: the restart loses them for good.
    const rrng = this.restartRng;
    if (rrng !== undefined && this.scatterer === null && rrng.chance(this.c.options.restart)) {
      this.c.queue.at(rrng.uniform(0, 0.5), () => this.restart());
    }
    const wrng = this.restartWorkerRng;
    if (
      wrng !== undefined &&
      this.scatterer === null &&
      wrng.chance(this.c.options.restartWorker)
    ) {
      const pick = wrng.random();
      this.c.queue.at(wrng.uniform(0, 0.5), () => this.restartWorker(pick));
    }
  }

  /**
   * Restart one worker the scheduler has (`restart-workers`), the one `pick`
   * (in [0, 1)) falls on: its tasks must run elsewhere, and what only it held
   * be computed again.
   */
  private restartWorker(pick: number): void {
    const addresses = [...this.scheduler.state.workers.keys()];
    if (addresses.length === 0) return;
    const address = addresses[Math.floor(pick * addresses.length)];
    const stimulusId = this.c.stimulusId("restart-workers");
    this.restartingWorkers.add(stimulusId);
    this.c.net.send(CLIENT_ID, SCHEDULER_ADDRESS, () =>
      this.scheduler.handle({
        kind: "client-message",
        msg: { op: "restart-workers", workers: [address], clientId: CLIENT_ID, stimulusId },
      }),
    );
  }

  /**
   * Restart the cluster (`restart`): the scheduler cancels every wanted key,
   * and once it answers, the client submits its graph again.
   */
  private restart(): void {
    const stimulusId = this.c.stimulusId("restart");
    this.restarting = stimulusId;
    this.c.net.send(CLIENT_ID, SCHEDULER_ADDRESS, () =>
      this.scheduler.handle({
        kind: "client-message",
        msg: { op: "restart", clientId: CLIENT_ID, stimulusId },
      }),
    );
  }

  /** The scheduler restarted the cluster at this client's request: submit again what it still wants. */
  private restarted(stimulusId: string): void {
    if (stimulusId !== this.restarting) {
      throw new SimFailure(
        "lost",
        `the client got restarted (${stimulusId}) for no restart of its own`,
      );
    }
    this.restarting = null;
    this.c.stats.restarts++;
    const again: number[] = [];
    for (const i of this.workload.wanted) {
      const key = this.workload.tasks[i].key;
      if (!this.status.has(key)) continue; // released or cancelled by the client
      this.set(key, "pending");
      this.errors.delete(key);
      this.cancelReasons.delete(key);
      again.push(i);
    }
    if (again.length > 0) this.send(again);
  }

  /**
   * Fire `key` and forget it (`fire-and-forget`, then release): the scheduler must
   * still run its task to the end, and then let it go (checked once the cluster
   * is quiet).
   */
  private fireAndForget(key: string): void {
    if (!this.status.has(key)) return;
    this.fired.push(key);
    const stimulusId = this.c.stimulusId("fire-and-forget");
    this.c.net.send(CLIENT_ID, SCHEDULER_ADDRESS, () =>
      this.scheduler.handle({
        kind: "client-message",
        msg: { op: "fire-and-forget", keys: [key], clientId: CLIENT_ID, stimulusId },
      }),
    );
    this.release(key);
  }

  /** Forget `key`: released or cancelled, it is no longer checked. */
  private forget(key: string): void {
    const status = this.status.get(key);
    if (status === undefined) return;
    if (status === "pending") this.pending--;
    this.status.delete(key);
    this.errors.delete(key);
    this.released.add(key);
  }

  /**
   * Cancel `key` (and, at the scheduler, the tasks depending on it that this
   * client alone wants): the keys the answer names are no longer checked.
   */
  private cancel(key: string, force: boolean): void {
    if (!this.status.has(key)) return;
    this.c.scatter?.disown(key);
    const stimulusId = this.c.stimulusId("cancel-keys");
    this.ownCancels.add(stimulusId);
    this.c.net.send(CLIENT_ID, SCHEDULER_ADDRESS, () =>
      this.scheduler.handle({
        kind: "client-message",
        msg: { op: "cancel-keys", keys: [key], clientId: CLIENT_ID, force, stimulusId },
      }),
    );
  }

  /** Stop wanting `key`: it is no longer checked. */
  private release(key: string): void {
    if (!this.status.has(key)) return;
    this.forget(key);
    this.c.scatter?.disown(key);
    const stimulusId = this.c.stimulusId("client-releases-keys");
    this.c.net.send(CLIENT_ID, SCHEDULER_ADDRESS, () =>
      this.scheduler.handle({
        kind: "client-message",
        msg: { op: "client-releases-keys", keys: [key], clientId: CLIENT_ID, stimulusId },
      }),
    );
  }

  private send(asked: readonly number[]): void {
    const w = this.workload;
    let wanted = asked;
    const lost = this.scatterer?.knownLost;
    if (lost !== undefined && lost.size > 0) {
      const doomed = needingAny(w, lost);
      wanted = asked.filter((i) => doomed[i] === 0);
      for (const i of asked) {
        const key = w.tasks[i].key;
        if (doomed[i] === 1 && this.status.get(key) === "pending") {
          this.set(key, "cancelled");
          this.cancelReasons.set(key, WITHHELD);
        }
      }
      if (wanted.length === 0) return;
    }
    const needed = neededTasks({ ...w, wanted });
    const tasks = new Map<string, GraphTask>();
    for (let i = 0; i < w.tasks.length; i++) {
      if (needed[i] === 0) continue;
      const t = w.tasks[i];
      if (t.scattered === true) continue; // the scheduler has it from update-data (or lost it)
      const deps = t.deps.map((d) => w.tasks[d].key);
      tasks.set(t.key, {
        spec: taskSpecOf(w, t),
        dependencies: deps,
        ...(t.resources !== undefined ? { resources: t.resources } : {}),
        ...(t.retries !== undefined ? { retries: t.retries } : {}),
        ...(t.workers !== undefined ? { workers: t.workers } : {}),
        ...(t.allowOtherWorkers !== undefined ? { allowOtherWorkers: t.allowOtherWorkers } : {}),
        ...(t.actor === true ? { actor: true } : {}),
      });
    }
    const keys = wanted.map((i) => w.tasks[i].key).filter((k) => !this.released.has(k));
    const stimulusId = this.c.stimulusId("update-graph");
    this.c.net.send(CLIENT_ID, SCHEDULER_ADDRESS, () =>
      this.scheduler.handle({
        kind: "client-message",
        msg: { op: "update-graph", tasks, keys, clientId: CLIENT_ID, stimulusId },
      }),
    );
  }

  /** Release every key (the client closes). */
  close(): void {
    this.c.scatter?.close();
    this.replicator?.close();
    const stimulusId = this.c.stimulusId("close-client");
    this.c.net.send(CLIENT_ID, SCHEDULER_ADDRESS, () =>
      this.scheduler.handle({
        kind: "client-message",
        msg: { op: "close-client", clientId: CLIENT_ID, stimulusId },
      }),
    );
  }

  /** A message from the scheduler arrived. */
  receive(msg: SchedulerToClientMessage): void {
    this.received[msg.op] = (this.received[msg.op] ?? 0) + 1;
    switch (msg.op) {
      case "key-in-memory": {
        const was = this.status.get(msg.key);
        this.set(msg.key, "memory");
        this.errors.delete(msg.key);
        this.read(msg.key);
        if (
          was !== undefined &&
          was !== "memory" &&
          this.c.scatter?.records.has(msg.key) !== true
        ) {
          this.replicator?.keyInMemory(msg.key);
        }
        return;
      }
      case "task-erred":
        this.set(msg.key, "erred");
        this.errors.set(msg.key, { blame: msg.blame, exceptionText: msg.exceptionText });
        return;
      case "lost-data":
      case "task-retried":
        this.set(msg.key, "pending");
        this.errors.delete(msg.key);
        return;
      case "cancelled-keys":
        // The answer to its own cancel: what it cancelled is not wanted any more.
        if (this.ownCancels.delete(msg.stimulusId)) for (const key of msg.keys) this.forget(key);
        else {
          this.scatterer?.cancelled(msg.keys, msg.reason);
          for (const key of msg.keys) {
            this.set(key, "cancelled");
            if (this.status.has(key)) this.cancelReasons.set(key, msg.reason);
          }
        }
        return;
      case "data-updated":
        if (this.scatterer?.dataUpdated(msg) === true && this.c.scatter !== null) {
          const registered: string[] = [];
          for (const rec of this.c.scatter.records.values()) {
            if (rec.fate === "registered") registered.push(rec.key);
          }
          this.replicator?.afterScatter(registered);
        }
        return;
      case "replicated":
      case "rebalanced":
      case "workers-retired":
        if (this.replicator === null) {
          throw new SimFailure(
            "lost",
            `the client got ${msg.op} (${msg.stimulusId}) and never replicated or rebalanced`,
          );
        }
        this.replicator.answered(msg);
        return;
      case "restarted":
        this.restarted(msg.stimulusId);
        return;
      case "workers-restarted":
        if (!this.restartingWorkers.delete(msg.stimulusId)) {
          throw new SimFailure(
            "lost",
            `the client got workers-restarted (${msg.stimulusId}) for no restart-workers of its own`,
          );
        }
        this.c.stats.workerRestarts += msg.restarted.length;
        return;
      case "task-no-worker":
      case "task-runnable":
        return;
    }
  }

  /**
   * Read wanted `key`, reported in memory, as a real client's `result()` would,
   * from every live worker the scheduler says holds it now: checked here, as it
   * may be released before the run's end checks.
   */
  private read(key: string): void {
    if (!this.status.has(key)) return;
    const ts = this.scheduler.state.tasks.get(key);
    if (ts?.state !== "memory") return; // gone again since: the client hears of it
    for (const ws of ts.whoHas) {
      const w = this.c.worker(ws.address);
      if (w === undefined || !w.alive) continue;
      const v = w.state.data.get(key) ?? w.state.actors.get(key);
      if (v instanceof SimValue || v instanceof SimActorRef) {
        this.c.checkRead(`the client (from ${ws.address})`, key, v.v);
      }
    }
  }

  private set(key: string, status: KeyStatus): void {
    const old = this.status.get(key);
    if (old === undefined) return;
    const wasDone = old !== "pending";
    const isDone = status !== "pending";
    if (wasDone && !isDone) this.pending++;
    else if (!wasDone && isDone) this.pending--;
    this.status.set(key, status);
    if (old !== status) this.c.progress();
  }
}
