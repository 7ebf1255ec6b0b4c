import type { Priority } from "../../../util/priority.ts";
import {
  AcquireReplicasEvent,
  CancelComputeEvent,
  ComputeTaskEvent,
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  FindMissingEvent,
  FreeKeysEvent,
  GatherDepBusyEvent,
  GatherDepFailureEvent,
  GatherDepNetworkFailureEvent,
  GatherDepSuccessEvent,
  PauseEvent,
  RefreshWhoHasEvent,
  RemoveReplicasEvent,
  RemoveWorkerEvent,
  RescheduleEvent,
  RetryBusyWorkerEvent,
  SecedeEvent,
  type StateMachineEvent,
  StealRequestEvent,
  UnpauseEvent,
  UpdateDataEvent,
} from "../events.ts";
import type { TaskState } from "../taskState.ts";
import type { WorkerState } from "../workerState.ts";
import { type FakeCluster, hasWaiter, type KeySpec } from "./fakeCluster.ts";
import type { Rng } from "./rng.ts";

/** The kinds of random action the generator picks from. */
export type ActionKind =
  // the scheduler
  | "compute"
  | "recompute"
  | "takeOver"
  | "computeForWaiters"
  | "failWaitedFor"
  | "free"
  | "steal"
  | "cancel"
  | "acquire"
  | "removeReplicas"
  | "refreshWhoHas"
  | "removeWorker"
  | "scatter"
  | "findMissing"
  | "pause"
  | "unpause"
  // completions of outstanding instructions
  | "executeDone"
  | "secede"
  | "resecede"
  | "gatherDone"
  | "retryBusy";

/** Relative weights of the actions, when they are possible. */
export const DEFAULT_WEIGHTS: Readonly<Record<ActionKind, number>> = {
  compute: 18,
  recompute: 2,
  takeOver: 1,
  computeForWaiters: 1,
  failWaitedFor: 1,
  free: 6,
  steal: 3,
  cancel: 2,
  acquire: 4,
  removeReplicas: 3,
  refreshWhoHas: 4,
  removeWorker: 1,
  scatter: 2,
  findMissing: 2,
  pause: 1,
  unpause: 4,
  executeDone: 22,
  secede: 3,
  resecede: 1,
  gatherDone: 22,
  retryBusy: 6,
};

export interface StimulusGeneratorOptions {
  /** Overrides of {@link DEFAULT_WEIGHTS}; 0 disables an action. */
  weights?: Partial<Record<ActionKind, number>>;
  /** Size of the task graph (keys created by compute-task and scatter). Default 40. */
  maxKeys?: number;
}

const ORDINARY = new Set(["waiting", "ready", "constrained"]);
const COMPUTE_BIAS = new Set(["cancelled", "resumed", "flight", "fetch", "missing", "error"]);
const ACQUIRE_BIAS = new Set(["cancelled", "error", "released", "missing", "flight"]);
const NO_DEPENDENCY_FETCH = new Set(["flight", "cancelled", "resumed"]);
const READY_OR_PROCESSING = new Set([
  "waiting",
  "ready",
  "constrained",
  "executing",
  "long-running",
]);

/**
 * Picks random stimuli that a real scheduler, real peers and a real worker shell could
 * send to the worker in its current state (see the validity rules on each action), and
 * keeps the {@link FakeCluster} up to date. Pure: all choices come from the Rng.
 */
export class StimulusGenerator {
  /** Candidate keys or actions a validity rule turned down, by rule. */
  readonly skipped: Record<string, number> = {};
  /** Stimuli made, by action. */
  readonly made: Partial<Record<ActionKind, number>> = {};
  private readonly weights: Record<ActionKind, number>;
  private readonly maxKeys: number;
  private n = 0;

  constructor(
    readonly ws: WorkerState,
    readonly cluster: FakeCluster,
    readonly rng: Rng,
    o: StimulusGeneratorOptions = {},
  ) {
    this.weights = { ...DEFAULT_WEIGHTS, ...o.weights };
    this.maxKeys = o.maxKeys ?? 40;
  }

  private sid(kind: string): string {
    return `${kind}-${++this.n}`;
  }

  private skip(reason: string): null {
    this.skipped[reason] = (this.skipped[reason] ?? 0) + 1;
    return null;
  }

  /** One random valid stimulus. */
  next(): StateMachineEvent {
    const c = this.cluster;
    const w: Partial<Record<ActionKind, number>> = { ...this.weights };
    if (c.executes.size === 0) {
      w.executeDone = 0;
      w.secede = 0;
      w.resecede = 0;
    }
    if (c.gathers.size === 0) w.gatherDone = 0;
    if (c.retries.length === 0) w.retryBusy = 0;
    if (c.refreshRequests.length === 0) w.refreshWhoHas = (w.refreshWhoHas ?? 0) / 8;
    if (this.ws.running) w.unpause = 0;
    else w.pause = 0;

    for (let attempt = 0; attempt < 20; attempt++) {
      const kind = this.rng.weighted(w);
      if (kind === null) break;
      const ev = this.make(kind);
      if (ev !== null) {
        this.made[kind] = (this.made[kind] ?? 0) + 1;
        return ev;
      }
    }
    return new FindMissingEvent({ stimulusId: this.sid("find-missing") });
  }

  /** A stimulus of the given kind, or null when none is valid now. */
  make(kind: ActionKind): StateMachineEvent | null {
    switch (kind) {
      case "compute":
        return this.compute();
      case "recompute":
        return this.recompute();
      case "takeOver":
        return this.takeOver();
      case "computeForWaiters":
        return this.computeForWaiters();
      case "failWaitedFor":
        return this.failWaitedFor();
      case "free":
        return this.free();
      case "steal":
        return this.steal();
      case "cancel":
        return this.cancel();
      case "acquire":
        return this.acquire();
      case "removeReplicas":
        return this.removeReplicas();
      case "refreshWhoHas":
        return this.refreshWhoHas();
      case "removeWorker":
        return this.removeWorker();
      case "scatter":
        return this.scatter();
      case "findMissing":
        return new FindMissingEvent({ stimulusId: this.sid("find-missing") });
      case "pause":
        return this.ws.running ? new PauseEvent({ stimulusId: this.sid("pause") }) : null;
      case "unpause":
        return this.ws.running ? null : new UnpauseEvent({ stimulusId: this.sid("unpause") });
      case "executeDone":
        return this.executeDone();
      case "secede":
        return this.secede();
      case "resecede":
        return this.resecede();
      case "gatherDone":
        return this.gatherDone();
      case "retryBusy":
        return this.retryBusy();
    }
  }

  // ------------------------------------------------------------ helpers

  private randomKnownKey(): string | null {
    const c = this.cluster;
    if (c.keys.length === 0) return null;
    // Mostly keys the worker knows; sometimes keys it never heard of or forgot.
    if (this.ws.tasks.size > 0 && this.rng.chance(0.85)) {
      return this.rng.pick([...this.ws.tasks.keys()]);
    }
    return this.rng.pick(c.keys);
  }

  private randomAssignedOrKnown(): string | null {
    const assigned = [...this.cluster.assigned.keys()];
    if (assigned.length > 0 && this.rng.chance(0.7)) return this.rng.pick(assigned);
    return this.randomKnownKey();
  }

  /** Up to n random keys of tasks in the given states. */
  private keysInStates(states: ReadonlySet<string>, n: number): string[] {
    const keys: string[] = [];
    for (const ts of this.ws.tasks.values()) if (states.has(ts.state)) keys.push(ts.key);
    return this.rng.sample(keys, n);
  }

  private randomPriority(): Priority {
    const n = this.rng.pick([1, 1, 2, 2, 3]);
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push(this.rng.range(-3, 3));
    return out;
  }

  /**
   * The scheduler computes a task only when it is not already processing here, none of
   * its dependents is processing here (they would need it in memory first), and all its
   * dependencies are in memory somewhere (so none of them is processing here, except
   * `takenOver`: see {@link takeOver}). `forWaiters`: dependents processing here are
   * fine (see {@link computeForWaiters}).
   */
  private canCompute(spec: KeySpec, takenOver: string | null = null, forWaiters = false): boolean {
    const c = this.cluster;
    if (c.assigned.has(spec.key)) return false;
    const ts = this.ws.tasks.get(spec.key);
    if (!forWaiters && ts !== undefined && c.hasActiveDependent(ts)) return false;
    for (const d of spec.deps) if (d !== takenOver && c.assigned.has(d)) return false;
    for (const d of spec.deps) if (!this.fetchable(d)) return false;
    for (const d of spec.deps) {
      if (this.ws.actors.has(d) && this.ws.tasks.get(d)?.state !== "memory") {
        // A seed quirk, faithfully ported: an actor cancelled here while executing
        // stays in `actors` (only _purge_state takes it out), so a dependent made to
        // wait for it fails _validate_task_waiting, which counts keys in `actors` as
        // present (fuzz seed 909265135, simulator seed 5318, the oracle's
        // scenario-actor-resumed-for-fetch).
        this.skip("compute: a dependency in actors but not in memory here (seed quirk)");
        return false;
      }
    }
    const hazard = ts === undefined ? null : this.seedHazardOfComputing(ts, spec);
    if (hazard !== null) {
      this.skip(hazard);
      return false;
    }
    if (ts !== undefined && (ts.state === "fetch" || ts.state === "error")) {
      if (this.viaReleasedConflicts(ts, spec)) {
        this.skip("compute: fetch/error->waiting would raise RecommendationsConflict (seed bug)");
        return false;
      }
    }
    return true;
  }

  /**
   * Why compute-task of `ts`, already here, would meet a seed bug (the skip reason),
   * or null.
   */
  private seedHazardOfComputing(ts: TaskState, spec: KeySpec): string | null {
    if (ts.comingFrom !== null) {
      // See fetchable(): computing a task in flight links it to its dependencies; one
      // of them in the same transfer makes that transfer a time bomb.
      const transfer = this.ws.inFlightWorkers.get(ts.comingFrom);
      for (const d of spec.deps) {
        if (transfer?.has(d)) {
          return "compute: task in flight with a dependency in the same transfer (seed bug)";
        }
      }
    }
    if (spec.actor && ts.state !== "memory" && (ts.nbytes !== null || ts.comingFrom !== null)) {
      // A seed quirk, faithfully ported: compute-task puts an actor's key in `actors`
      // at once, before it runs. Known here as a dependency, the key is then counted
      // in the expected nbytes by its size learnt as one, or is in `actors` while in
      // flight: the seed's validate_state rejects the seed's own state (fuzz seeds
      // 1908916520 and 1196409129, simulator seed 910607, the oracle's
      // scenario-actor-of-fetched-input).
      return "compute: an actor this worker knows as a dependency (seed quirk)";
    }
    if (NO_DEPENDENCY_FETCH.has(ts.state)) {
      // A seed bug, faithfully ported: from these states compute-task does not go
      // through released -> waiting, so nothing recommends fetch for the dependencies,
      // yet _update_who_has gives them the new who_has. A dependency in missing is then
      // left in missing with replicas, which validate_state rejects (and so does the
      // assertion of find-missing). Reproduced on the seed with AcquireReplicas(x);
      // GatherDepSuccess without x (x missing); AcquireReplicas(y) (y in flight);
      // ComputeTask(y, who_has={x: [w]}).
      for (const d of spec.deps) {
        if (this.ws.tasks.get(d)?.state === "missing") {
          return "compute: a task in flight/cancelled/resumed with a missing dependency (seed bug)";
        }
      }
    }
    return null;
  }

  /**
   * Whether the scheduler may have this worker fetch the key (acquire-replicas, or a
   * dependency of compute-task). Not when the worker still links the key to dependencies
   * of its own (it computed it earlier and keeps it for a dependent): a transfer that
   * carries a task and one of its dependencies at once is a time bomb in the seed, as
   * the outcome depends on the order in which the recommendations of the transfer's end
   * are processed (the port's order is deterministic, the seed's depends on hashing).
   * Reproduced on the seed, both with one order or the other depending on PYTHONHASHSEED:
   * - a dependent cancelled in flight is released first and recommends `released` for
   *   its dependency, which overrides that dependency's `memory`: flight -> released
   *   with done=True, AssertionError in _transition_flight_released
   *   (Pause; ComputeTask(x, who_has={b}); AcquireReplicas(a); Unpause; FreeKeys(x);
   *   ComputeTask(b, who_has={a}); FreeKeys(b); GatherDepSuccess(a, b));
   * - a dependent in resumed(flight->waiting) that the peer did not send goes waiting
   *   and recommends `fetch` for its dependency cancelled in the same flight, which
   *   overrides that dependency's `memory`; cancelled(done) -> fetch releases it, and the
   *   dependent waits for a released task forever (validate_state fails)
   *   (ComputeTask(t, who_has={a, b}); FreeKeys(t); ComputeTask(b, who_has={a});
   *   GatherDepSuccess(data={a})).
   */
  private fetchable(key: string): boolean {
    const ts = this.ws.tasks.get(key);
    if (ts === undefined || ts.state === "memory" || ts.dependencies.size === 0) return true;
    this.skip("fetch of a task linked to its own dependencies (seed bug)");
    return false;
  }

  /**
   * A seed bug, faithfully ported: fetch->waiting and error->waiting go through released.
   * The released half recommends `released` for every dependency that is not in memory,
   * not processing and has no other waiter (a dependency just created by compute-task
   * is one); the waiting half then recommends `fetch` for it, and the two conflict
   * (RecommendationsConflict, raised as InvalidTransition). Reproduced on the seed with
   * `AcquireReplicas(x) while paused; ComputeTask(x, who_has={d: [w]})`, and with
   * `ComputeTask(d); ExecuteSuccess(d); ComputeTask(x, deps d); ExecuteFailure(x);
   * FreeKeys(d); ComputeTask(x, deps d)` (retrying an erred task).
   */
  private viaReleasedConflicts(ts: TaskState, spec: KeySpec): boolean {
    for (const k of spec.deps) {
      const d = this.ws.tasks.get(k);
      if (d === undefined) return true;
      if (d.state === "memory" || READY_OR_PROCESSING.has(d.state)) continue;
      let otherWaiter = false;
      for (const w of d.waiters) if (w !== ts) otherWaiter = true;
      if (!otherWaiter) return true;
    }
    return false;
  }

  // ------------------------------------------------------------ the scheduler

  private compute(): StateMachineEvent | null {
    const { cluster: c, rng } = this;
    let spec: KeySpec | null = null;
    if (c.keys.length < this.maxKeys && (c.keys.length < 3 || rng.chance(0.3))) {
      // Sometimes on data that only peers hold, that this worker never heard of.
      const fresh: string[] = [];
      if (c.keys.length + 3 < this.maxKeys && rng.chance(0.25)) {
        for (let i = rng.range(1, 2); i > 0; i--) {
          const data = c.newKey(rng, { leaf: true });
          c.materialize(rng, data.key);
          fresh.push(data.key);
        }
      }
      spec = c.newKey(rng, { extraDeps: fresh });
      if (!this.canCompute(spec)) spec = null;
    } else {
      // Often a key in a state where a compute-task is most interesting.
      const candidates = rng.chance(0.4) ? this.keysInStates(COMPUTE_BIAS, 4) : [];
      for (const k of [...candidates, ...rng.sample(c.keys, 8)]) {
        const s = c.spec(k);
        if (this.canCompute(s)) {
          spec = s;
          break;
        }
      }
    }
    if (spec === null) return this.skip("compute: no eligible key");
    return this.computeTaskEvent(spec, "compute");
  }

  /**
   * compute-task again, with a new run_id, for a task already waiting, queued or
   * running here, or asked for while in flight (resumed(flight->waiting)). The
   * published fuzz vectors hold such events; for the first the seed logs them and
   * takes the new run_id and looks at nothing else in them, the last it recommends
   * waiting again.
   */
  private recompute(): StateMachineEvent | null {
    const keys: string[] = [];
    for (const ts of this.ws.tasks.values()) {
      const resumedForCompute =
        ts.state === "resumed" && ts.next === "waiting" && this.cluster.assigned.has(ts.key);
      if (READY_OR_PROCESSING.has(ts.state) || resumedForCompute) keys.push(ts.key);
    }
    if (keys.length === 0) return this.skip("recompute: no task processing here");
    const spec = this.cluster.spec(this.rng.pick(keys));
    const ts = this.ws.tasks.get(spec.key) as TaskState;
    const hazard = this.seedHazardOfComputing(ts, spec);
    return hazard === null ? this.computeTaskEvent(spec, "recompute") : this.skip(hazard);
  }

  /**
   * The scheduler holds a task it assigned here as in memory on a peer (another worker
   * computed it, and this worker has not heard of the cancel yet), and asks this worker
   * for it: as a replica (acquire-replicas) or as the dependency of a task to compute
   * here. The published fuzz vectors do both, to tasks ready, executing and
   * resumed(flight->waiting). The fake scheduler no longer expects the task from this
   * worker (see FakeCluster.takenOver).
   */
  private takeOver(): StateMachineEvent | null {
    const { cluster: c, rng } = this;
    const candidates = [...c.assigned.keys()].filter((k) => !c.spec(k).actor && this.fetchable(k));
    if (candidates.length === 0) return this.skip("takeOver: no task processing here");
    const key = rng.pick(candidates);
    c.materialize(rng, key);
    if (rng.chance(0.5)) {
      return new AcquireReplicasEvent({
        whoHas: new Map([[key, c.whoHasFor(rng, key)]]),
        nbytes: new Map([[key, c.spec(key).nbytes]]),
        stimulusId: this.sid("acquire"),
      });
    }
    const dependents = c.keys.filter((k) => c.spec(k).deps.includes(key));
    for (const k of rng.sample(dependents, 4)) {
      if (this.canCompute(c.spec(k), key)) return this.computeTaskEvent(c.spec(k), "compute");
    }
    if (c.keys.length >= this.maxKeys) return this.skip("takeOver: no dependent to compute");
    const spec = c.newKey(rng, { extraDeps: [key] });
    if (!this.canCompute(spec, key)) return this.skip("takeOver: no dependent to compute");
    return this.computeTaskEvent(spec, "compute");
  }

  /**
   * compute-task for a task that dependents processing here wait for (fetching it, or
   * waiting for it to be found): no real scheduler does that, as it assigns a task only
   * once its dependencies are in memory, but the published fuzz vectors do, and the seed
   * turns a task in flight into resumed(flight->waiting) then. The generator then never
   * fails, reschedules or steals a task others wait for here, which would leave them
   * waiting for a task in error or released (invalid states in the seed too).
   */
  private computeForWaiters(): StateMachineEvent | null {
    const { cluster: c, rng, ws } = this;
    const candidates: string[] = [];
    for (const ts of ws.tasks.values()) {
      if (!c.assigned.has(ts.key) && hasWaiter(ts) && !c.spec(ts.key).actor) {
        candidates.push(ts.key);
      }
    }
    for (const k of rng.sample(candidates, 4)) {
      if (this.canCompute(c.spec(k), null, true))
        return this.computeTaskEvent(c.spec(k), "compute");
    }
    return this.skip("computeForWaiters: no task others wait for");
  }

  private computeTaskEvent(spec: KeySpec, kind: string): ComputeTaskEvent {
    const { cluster: c, rng, ws } = this;
    const whoHas = new Map<string, string[]>();
    const nbytes = new Map<string, number>();
    for (const d of spec.deps) {
      // The dependency is in memory on some peer(s): if none holds it (lost, computed
      // here, scattered here...), the scheduler computed or replicated it there first.
      c.materialize(rng, d);
      const holders = c.whoHasFor(rng, d);
      // The scheduler names every holder it knows of: this worker too, for a dependency
      // in memory here (the published fuzz vectors always do).
      if (ws.tasks.get(d)?.state === "memory") holders.unshift(c.address);
      whoHas.set(d, holders);
      nbytes.set(d, c.spec(d).nbytes);
    }
    const resources = new Map<string, number>();
    if (ws.totalResources.size > 0 && rng.chance(0.3)) {
      const [name, total] = rng.pick([...ws.totalResources]);
      resources.set(name, rng.pick([total, 1, 0.5].filter((x) => x <= total)));
    }
    return new ComputeTaskEvent({
      key: spec.key,
      runId: c.newRunId(),
      whoHas,
      nbytes,
      priority: this.randomPriority(),
      duration: rng.random(),
      runSpec: null,
      resourceRestrictions: resources,
      actor: spec.actor,
      annotations: {},
      spanId: null,
      stimulusId: this.sid(kind),
    });
  }

  /**
   * Free some keys. A key is freed together with every dependent that is processing
   * here (the scheduler releases dependents first; releasing a dependency under a task
   * that waits for it is not something it does).
   */
  private free(): StateMachineEvent | null {
    const { cluster: c, rng, ws } = this;
    const batch = new Set<string>();
    const nroots = rng.pick([1, 1, 1, 2, 3]);
    for (let i = 0; i < nroots; i++) {
      const k = this.randomKnownKey();
      if (k === null) return this.skip("free: no key");
      const todo = [k];
      while (todo.length > 0) {
        const key = todo.pop() as string;
        if (batch.has(key)) continue;
        batch.add(key);
        const ts = ws.tasks.get(key);
        if (ts === undefined) continue;
        for (const d of ts.dependents) if (c.isActive(d)) todo.push(d.key);
      }
    }
    return new FreeKeysEvent({ keys: rng.shuffle([...batch]), stimulusId: this.sid("free") });
  }

  private steal(): StateMachineEvent | null {
    const k = this.randomAssignedOrKnown();
    if (k === null) return this.skip("steal: no key");
    const ts = this.ws.tasks.get(k);
    if (ts !== undefined && ORDINARY.has(ts.state) && hasWaiter(ts)) {
      return this.skip("steal: a task others wait for here (see computeForWaiters)");
    }
    return new StealRequestEvent({ key: k, stimulusId: this.sid("steal") });
  }

  /** The seed asserts that a task cancelled while waiting or ready has no dependents. */
  private cancel(): StateMachineEvent | null {
    const k = this.randomAssignedOrKnown();
    if (k === null) return this.skip("cancel: no key");
    const ts = this.ws.tasks.get(k);
    if (ts !== undefined && ORDINARY.has(ts.state) && ts.dependents.size > 0) {
      return this.skip("cancel: waiting/ready task with dependents (seed asserts)");
    }
    return new CancelComputeEvent({ key: k, stimulusId: this.sid("cancel") });
  }

  /** Replicate keys held by peers to this worker (never keys processing here). */
  private acquire(): StateMachineEvent | null {
    const { cluster: c, rng } = this;
    // Actors are never replicated.
    const bias = rng.chance(0.3) ? this.keysInStates(ACQUIRE_BIAS, 2) : [];
    const keys = [...bias, ...rng.sample(c.keys, rng.range(1, 6))]
      .filter((k) => !c.assigned.has(k) && !c.spec(k).actor && this.fetchable(k))
      .slice(0, rng.range(1, 3));
    if (keys.length === 0) return this.skip("acquire: no key");
    const whoHas = new Map<string, string[]>();
    const nbytes = new Map<string, number>();
    for (const k of keys) {
      c.materialize(rng, k);
      whoHas.set(k, c.whoHasFor(rng, k));
      nbytes.set(k, c.spec(k).nbytes);
    }
    return new AcquireReplicasEvent({ whoHas, nbytes, stimulusId: this.sid("acquire") });
  }

  /**
   * Drop replicas in memory here. Never of a key with a dependent processing here: the
   * seed raises for executing/long-running dependents, and waiting/ready ones would be
   * left without their data.
   */
  private removeReplicas(): StateMachineEvent | null {
    const { cluster: c, rng, ws } = this;
    const candidates: string[] = [];
    for (const ts of ws.tasks.values()) {
      if (ts.state === "memory" && !c.hasActiveDependent(ts)) candidates.push(ts.key);
    }
    if (candidates.length === 0) return this.skip("removeReplicas: no key in memory");
    const keys = rng.sample(candidates, rng.range(1, 3));
    // Keys not in memory are ignored by the worker.
    if (rng.chance(0.2)) {
      const other = this.randomKnownKey();
      if (other !== null && !keys.includes(other)) {
        const ts = ws.tasks.get(other);
        if (ts === undefined || ts.state !== "memory") keys.push(other);
      }
    }
    return new RemoveReplicasEvent({ keys, stimulusId: this.sid("remove-replicas") });
  }

  /** Answer a pending request-refresh-who-has (or, rarely, volunteer who_has) with the truth. */
  private refreshWhoHas(): StateMachineEvent | null {
    const { cluster: c, rng, ws } = this;
    let keys: string[];
    if (c.refreshRequests.length > 0) {
      const i = rng.int(c.refreshRequests.length);
      keys = c.refreshRequests.splice(i, 1)[0];
    } else {
      if (ws.tasks.size === 0) return this.skip("refreshWhoHas: no key");
      keys = rng.sample([...ws.tasks.keys()], rng.range(1, 3));
    }
    return new RefreshWhoHasEvent({
      whoHas: c.truthWhoHas(keys),
      stimulusId: this.sid("refresh-who-has"),
    });
  }

  private removeWorker(): StateMachineEvent | null {
    const { cluster: c, rng } = this;
    const peer = rng.pick(c.peers);
    c.killPeer(peer);
    return new RemoveWorkerEvent({ worker: peer, stimulusId: this.sid("remove-worker") });
  }

  /**
   * Scatter: new keys, or keys not processing here in a state where a client's scatter
   * is no race the seed calls "expected to misbehave" (executing, flight...).
   */
  private scatter(): StateMachineEvent | null {
    const { cluster: c, rng, ws } = this;
    const data = new Map<string, unknown>();
    const n = rng.range(1, 2);
    for (let i = 0; i < n; i++) {
      if (c.keys.length < this.maxKeys && rng.chance(0.6)) {
        const spec = c.newKey(rng, { leaf: true });
        data.set(spec.key, rng.chance(0.5) ? rng.int(1000) : `value of ${spec.key}`);
        continue;
      }
      if (c.keys.length === 0) continue;
      const k = rng.pick(c.keys);
      if (c.assigned.has(k) || c.spec(k).actor) continue;
      const ts = ws.tasks.get(k);
      if (ts !== undefined && !SCATTERABLE.has(ts.state)) continue;
      data.set(k, rng.int(1000));
    }
    if (data.size === 0) return this.skip("scatter: no key");
    return new UpdateDataEvent({ data, stimulusId: this.sid("scatter") });
  }

  // ------------------------------------------------------------ completions

  private executeDone(): StateMachineEvent | null {
    const { cluster: c, rng } = this;
    const [key, ex] = rng.pick([...c.executes]);
    const outcome = rng.weighted({ success: 75, failure: 15, reschedule: 10 });
    if (outcome !== "success") {
      const ts = this.ws.tasks.get(key);
      if (ts !== undefined && hasWaiter(ts)) {
        return this.skip("executeDone: failure of a task others wait for (see computeForWaiters)");
      }
    }
    if (outcome === "failure")
      return this.executeFailure(key, ex.runId, rng.chance(0.8) ? 1 : null);
    if (outcome === "reschedule") {
      return new RescheduleEvent({ key, stimulusId: this.sid("reschedule") });
    }
    const spec = c.graph.get(key);
    return new ExecuteSuccessEvent({
      key,
      runId: ex.runId,
      value: `${key}@${ex.runId}`,
      start: 1,
      stop: 2,
      nbytes: spec !== undefined && rng.chance(0.8) ? spec.nbytes : rng.range(0, 10_000),
      type: "str",
      stimulusId: this.sid("execute-success"),
    });
  }

  /** secede() from a task running on a thread that has not seceded yet. */
  private secede(): StateMachineEvent | null {
    const candidates = [...this.cluster.executes].filter(([, ex]) => !ex.seceded);
    if (candidates.length === 0) return this.skip("secede: every running task seceded");
    return this.secedeOneOf(candidates.map(([k]) => k));
  }

  private secedeOneOf(keys: readonly string[]): SecedeEvent {
    const { rng } = this;
    return new SecedeEvent({
      key: rng.pick(keys),
      computeDuration: rng.random(),
      stimulusId: this.sid("secede"),
    });
  }

  /**
   * secede() again from a task that seceded, then rejoin()ed: rejoin does not tell the
   * state machine, so the second SecedeEvent finds the task long-running (or cancelled or
   * resumed from there). The published fuzz vectors hold such events.
   */
  private resecede(): StateMachineEvent | null {
    const candidates = [...this.cluster.executes].filter(([, ex]) => ex.seceded);
    if (candidates.length === 0) return this.skip("resecede: no running task seceded");
    return this.secedeOneOf(candidates.map(([k]) => k));
  }

  /**
   * The failure of a transfer or an execution of a task that others wait for here,
   * which the other actions avoid: the waiting tasks are then left waiting for a task in
   * error (dask/distributed#6705), a state the seed's `validate_state` rejects, but the
   * published fuzz vectors reach it and go on (a cancel-compute of such a waiting task
   * releases its dependency in error). The driver stops checking `validateState()` while
   * a task waits for one in error, and its fake scheduler frees such tasks when it
   * drains (see FuzzDriver).
   */
  private failWaitedFor(): StateMachineEvent | null {
    const { cluster: c, rng, ws } = this;
    const waitedFor = (k: string) => {
      const ts = ws.tasks.get(k);
      return (
        ts !== undefined && (ts.state === "flight" || ts.state === "executing") && hasWaiter(ts)
      );
    };
    const gathers = [...c.gathers].filter(([, g]) => g.keys.some(waitedFor));
    const executes = [...c.executes.keys()].filter(waitedFor);
    if (gathers.length + executes.length === 0) return this.skip("failWaitedFor: none");
    if (executes.length === 0 || (gathers.length > 0 && rng.chance(0.5))) {
      const [worker, g] = rng.pick(gathers);
      return this.gatherFailure(worker, g.totalNbytes);
    }
    const key = rng.pick(executes);
    return this.executeFailure(key, (c.executes.get(key) as { runId: number }).runId, 1);
  }

  private executeFailure(key: string, runId: number, start: number | null): ExecuteFailureEvent {
    return new ExecuteFailureEvent({
      key,
      runId,
      start,
      stop: 2,
      exception: "ValueError('boom')",
      traceback: null,
      exceptionText: "ValueError: boom",
      tracebackText: "",
      stimulusId: this.sid("execute-failure"),
    });
  }

  private gatherFailure(worker: string, totalNbytes: number): GatherDepFailureEvent {
    return new GatherDepFailureEvent({
      worker,
      totalNbytes,
      exception: "OSError('cannot deserialize')",
      traceback: null,
      exceptionText: "OSError: cannot deserialize",
      tracebackText: "",
      stimulusId: this.sid("gather-failure"),
    });
  }

  private gatherDone(): StateMachineEvent | null {
    const { cluster: c, rng, ws } = this;
    const [worker, g] = rng.pick([...c.gathers]);
    const dead = c.deadPeers.has(worker);
    const f = { worker, totalNbytes: g.totalNbytes };
    const outcome = rng.weighted({
      success: dead ? 15 : 70,
      busy: dead ? 0 : 10,
      network: dead ? 60 : 10,
      failure: 5,
    });
    if (outcome === "busy") {
      return new GatherDepBusyEvent({ ...f, stimulusId: this.sid("gather-busy") });
    }
    if (outcome === "network") {
      return new GatherDepNetworkFailureEvent({ ...f, stimulusId: this.sid("gather-network") });
    }
    if (outcome === "failure") {
      // dask/distributed#6705: a dependency in flight that errs leaves its waiting
      // dependents waiting on a task in error, which breaks validate_state in the seed
      // too (its own test_gather_dep_failure switches validation off).
      for (const k of g.keys) {
        const ts = ws.tasks.get(k);
        if (ts !== undefined && ts.state === "flight" && hasWaiter(ts)) {
          return this.skip("gatherDone: failure of a dependency with waiters (dask#6705)");
        }
      }
      return this.gatherFailure(worker, g.totalNbytes);
    }
    const mode = rng.weighted({ all: 70, some: 20, none: 10 });
    const data = new Map<string, unknown>();
    for (const k of g.keys) {
      if (mode === "all" || (mode === "some" && rng.chance(0.5)))
        data.set(k, `${k} from ${worker}`);
    }
    return new GatherDepSuccessEvent({ ...f, data, stimulusId: this.sid("gather-success") });
  }

  private retryBusy(): StateMachineEvent | null {
    const { cluster: c, rng } = this;
    const worker = rng.pick(c.retries);
    return new RetryBusyWorkerEvent({ worker, stimulusId: this.sid("retry-busy") });
  }
}

const SCATTERABLE = new Set(["released", "fetch", "missing", "memory", "error"]);
