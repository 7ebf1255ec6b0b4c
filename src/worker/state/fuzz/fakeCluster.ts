import type { StateMachineEvent } from "../events.ts";
import type { Instruction } from "../instructions.ts";
import { PROCESSING, type TaskState } from "../taskState.ts";
import type { WorkerState } from "../workerState.ts";
import type { Rng } from "./rng.ts";

/** A key of the fake task graph. Its dependencies and size never change (as in a real graph). */
export interface KeySpec {
  readonly key: string;
  /** Keys created before this one: the graph is a DAG by construction. */
  readonly deps: readonly string[];
  /** The size the scheduler reports for the key's value. */
  readonly nbytes: number;
  /** Whether the task is an actor. */
  readonly actor: boolean;
}

/** An Execute instruction the worker gave and the fake shell has not completed yet. */
export interface OutstandingExecute {
  /** `ts.runId` when the instruction was given (what Worker.execute captures). */
  readonly runId: number;
  /** Whether the running task already called secede(). */
  seceded: boolean;
}

/** A GatherDep instruction not completed yet. */
export interface OutstandingGather {
  readonly keys: readonly string[];
  readonly totalNbytes: number;
}

/** Counts per instruction class, over the life of a cluster. */
export type InstructionCounts = Record<string, number>;

const PREFIXES = ["x", "y", "z", "sum", "load"] as const;

/**
 * A fake scheduler and fake peers around one WorkerState.
 *
 * Holds the ground truth the worker can only learn through stimuli (which peers hold
 * which keys, which peers are alive), the scheduler's belief of which tasks it asked this
 * worker to compute, and every asynchronous instruction the worker gave that is still
 * outstanding. The fuzz generator completes only those instructions. Pure: all randomness
 * comes from the Rng passed in.
 */
export class FakeCluster {
  /** The address of the worker under test. */
  readonly address: string;
  /** Live peers. */
  readonly peers: string[] = [];
  /** Peers the scheduler removed; they never come back. */
  readonly deadPeers = new Set<string>();
  /** The task graph, in creation order (every dependency precedes its dependents). */
  readonly graph = new Map<string, KeySpec>();
  readonly keys: string[] = [];
  /** Ground truth: live peers holding each key. */
  readonly replicas = new Map<string, Set<string>>();
  /** Keys the scheduler asked this worker to compute and still expects from it, with the run id. */
  readonly assigned = new Map<string, number>();
  /**
   * Keys the scheduler took back while this worker may still compute them: it holds them
   * as in memory on a peer and asked this worker for them (acquire-replicas, or as a
   * dependency of compute-task). Whatever the worker does with such a task is fine by
   * the scheduler, task-finished included (Dask's scheduler takes it as a new replica).
   */
  readonly takenOver = new Set<string>();
  /** Outstanding Execute instructions, by key. */
  readonly executes = new Map<string, OutstandingExecute>();
  /** Outstanding GatherDep instructions, by peer. */
  readonly gathers = new Map<string, OutstandingGather>();
  /** Outstanding RetryBusyWorkerLater instructions (a multiset of peers). */
  readonly retries: string[] = [];
  /** RequestRefreshWhoHasMsg the scheduler has not answered yet. */
  readonly refreshRequests: string[][] = [];
  /**
   * task-finished messages whose run_id is not the scheduler's latest for the task: a
   * task cancelled while executing and computed again resumes the first execution,
   * whose run_id the shell captured when it started.
   */
  staleRunIds = 0;
  /** Instructions seen, per class. */
  readonly instructionCounts: InstructionCounts = {};

  private nextRunId = 1;
  private nextPort = 9001;
  private readonly hosts: readonly string[];

  constructor(o: { address?: string; hosts?: readonly string[]; npeers?: number } = {}) {
    this.address = o.address ?? "tcp://10.0.0.1:9000";
    this.hosts = o.hosts ?? ["10.0.0.1", "10.0.0.2"];
    const npeers = o.npeers ?? 6;
    for (let i = 0; i < npeers; i++) this.peers.push(this.newPeerAddress(this.hosts[i % 2]));
  }

  private newPeerAddress(host: string): string {
    return `tcp://${host}:${this.nextPort++}`;
  }

  // ----------------------------------------------------------------- graph

  /** Add a key to the graph with dependencies among the existing keys. */
  newKey(rng: Rng, o: { leaf?: boolean; extraDeps?: readonly string[] } = {}): KeySpec {
    const i = this.keys.length;
    const prefix = rng.pick(PREFIXES);
    const key = rng.chance(0.1) ? `('${prefix}-${i}', ${rng.int(4)})` : `${prefix}-${i}`;
    const ndeps = o.leaf ? 0 : rng.pick([0, 0, 1, 1, 1, 2, 2, 3]);
    // Prefer recent keys, so that chains form. An actor may be a dependency: a peer
    // sends a handle to it, and the seed stores that as any fetched value.
    const extra = o.extraDeps ?? [];
    const pool = this.keys.slice(-12).filter((k) => !extra.includes(k));
    const deps = [...extra, ...rng.sample(pool, ndeps)];
    const actor = !o.leaf && rng.chance(0.02);
    const spec: KeySpec = { key, deps, nbytes: randomNbytes(rng), actor };
    this.graph.set(key, spec);
    this.keys.push(key);
    this.replicas.set(key, new Set());
    return spec;
  }

  spec(key: string): KeySpec {
    const s = this.graph.get(key);
    if (s === undefined) throw new Error(`unknown key ${key}`);
    return s;
  }

  newRunId(): number {
    return this.nextRunId++;
  }

  // ----------------------------------------------------------------- replicas

  liveReplicas(key: string): Set<string> {
    let s = this.replicas.get(key);
    if (s === undefined) {
      s = new Set();
      this.replicas.set(key, s);
    }
    return s;
  }

  /**
   * The scheduler (re)computed a key on some peers, or replicated it there: used before
   * telling the worker a who_has for a key no live peer holds.
   */
  materialize(rng: Rng, key: string): void {
    const r = this.liveReplicas(key);
    if (r.size > 0) return;
    for (const p of rng.sample(this.peers, rng.range(1, 2))) r.add(p);
  }

  /**
   * A who_has list as the scheduler would send it: 1-3 of the live peers holding the key,
   * sometimes with a stale live peer that does not hold it. Never this worker's address.
   * Call `materialize` first.
   */
  whoHasFor(rng: Rng, key: string): string[] {
    const holders = [...this.liveReplicas(key)];
    const out = rng.sample(holders, rng.range(1, 3));
    if (rng.chance(0.05)) {
      const stale = this.peers.filter((p) => !out.includes(p));
      if (stale.length > 0) out.push(rng.pick(stale));
    }
    return out;
  }

  /** The scheduler's answer to a refresh-who-has request: the truth. */
  truthWhoHas(keys: Iterable<string>): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const k of keys) out.set(k, [...this.liveReplicas(k)]);
    return out;
  }

  /** A peer dies; a new one (new address) joins on the same host. Returns the dead peer. */
  killPeer(peer: string): void {
    const i = this.peers.indexOf(peer);
    if (i < 0) throw new Error(`not a live peer: ${peer}`);
    this.peers.splice(i, 1);
    this.deadPeers.add(peer);
    for (const r of this.replicas.values()) r.delete(peer);
    const host = peer.slice("tcp://".length, peer.lastIndexOf(":"));
    this.peers.push(this.newPeerAddress(host));
  }

  // ----------------------------------------------------------------- worker tasks

  /**
   * Whether the scheduler considers `ts` as processing on this worker, or the worker is
   * about to compute it. Such a task needs all its dependencies, so the scheduler never
   * takes them away while it is active.
   */
  isActive(ts: TaskState): boolean {
    return (
      PROCESSING.has(ts.state) ||
      this.assigned.has(ts.key) ||
      (ts.state === "resumed" && ts.next === "waiting")
    );
  }

  hasActiveDependent(ts: TaskState): boolean {
    for (const d of ts.dependents) if (this.isActive(d)) return true;
    return false;
  }

  // ----------------------------------------------------------------- bookkeeping

  /** Update the model for an event about to be handled. */
  noteStimulus(ws: WorkerState, ev: StateMachineEvent): void {
    switch (ev.cls) {
      case "ComputeTaskEvent":
        this.assigned.set(ev.key, ev.runId);
        this.takenOver.delete(ev.key);
        for (const d of ev.nbytes.keys()) this.takeOver(d);
        break;
      case "AcquireReplicasEvent":
        for (const k of ev.nbytes.keys()) this.takeOver(k);
        break;
      case "FreeKeysEvent":
        for (const k of ev.keys) this.assigned.delete(k);
        break;
      case "CancelComputeEvent": {
        const ts = ws.tasks.get(ev.key);
        if (ts && (ts.state === "waiting" || ts.state === "ready" || ts.state === "constrained")) {
          this.assigned.delete(ev.key);
        }
        break;
      }
      case "ExecuteSuccessEvent":
      case "ExecuteFailureEvent":
      case "RescheduleEvent":
        if (!this.executes.delete(ev.key)) throw new Error(`no outstanding Execute(${ev.key})`);
        break;
      case "SecedeEvent": {
        const ex = this.executes.get(ev.key);
        // Twice is fine: secede(), rejoin(), secede() (rejoin tells no one).
        if (ex === undefined) throw new Error(`cannot secede ${ev.key}: not running`);
        ex.seceded = true;
        break;
      }
      case "GatherDepSuccessEvent": {
        const g = this.gathers.get(ev.worker);
        if (g === undefined) throw new Error(`no outstanding GatherDep(${ev.worker})`);
        this.gathers.delete(ev.worker);
        // A peer that leaves out a key it was asked for does not hold it (any more); one
        // that sends it does.
        const alive = !this.deadPeers.has(ev.worker);
        for (const k of g.keys) {
          if (!ev.data.has(k)) this.replicas.get(k)?.delete(ev.worker);
          else if (alive) this.liveReplicas(k).add(ev.worker);
        }
        break;
      }
      case "GatherDepBusyEvent":
      case "GatherDepNetworkFailureEvent":
      case "GatherDepFailureEvent":
        if (!this.gathers.delete(ev.worker)) {
          throw new Error(`no outstanding GatherDep(${ev.worker})`);
        }
        break;
      case "RetryBusyWorkerEvent": {
        const i = this.retries.indexOf(ev.worker);
        if (i < 0) throw new Error(`no outstanding RetryBusyWorkerLater(${ev.worker})`);
        this.retries.splice(i, 1);
        break;
      }
      default:
        break;
    }
  }

  private takeOver(key: string): void {
    if (this.assigned.delete(key)) this.takenOver.add(key);
  }

  /** Record the instructions the worker gave in answer to a stimulus. */
  observe(ws: WorkerState, instructions: readonly Instruction[]): void {
    for (const inst of instructions) {
      this.instructionCounts[inst.cls] = (this.instructionCounts[inst.cls] ?? 0) + 1;
      switch (inst.cls) {
        case "Execute": {
          if (this.executes.has(inst.key)) {
            throw new Error(`second Execute(${inst.key}) while the first is still running`);
          }
          const ts = ws.tasks.get(inst.key);
          if (ts === undefined) throw new Error(`Execute(${inst.key}) of an unknown task`);
          this.executes.set(inst.key, { runId: ts.runId, seceded: false });
          break;
        }
        case "GatherDep":
          if (this.gathers.has(inst.worker)) {
            throw new Error(`second GatherDep(${inst.worker}) while the first is in flight`);
          }
          if (inst.worker === this.address) throw new Error("GatherDep from the worker itself");
          if (inst.toGather.size === 0) throw new Error(`empty GatherDep(${inst.worker})`);
          this.gathers.set(inst.worker, {
            keys: [...inst.toGather],
            totalNbytes: inst.totalNbytes,
          });
          break;
        case "RetryBusyWorkerLater":
          this.retries.push(inst.worker);
          break;
        case "TaskFinishedMsg": {
          // The scheduler accepts task-finished only from the worker processing the task.
          const runId = this.assigned.get(inst.key);
          if (runId === undefined) {
            if (this.takenOver.has(inst.key)) break;
            throw new Error(`task-finished for ${inst.key}, which the scheduler did not ask for`);
          }
          if (inst.runId !== runId) this.staleRunIds++;
          this.assigned.delete(inst.key);
          break;
        }
        case "AddKeysMsg":
          // add-keys is for replicas: a task the scheduler expects must be task-finished.
          for (const k of inst.keys) {
            if (this.assigned.has(k))
              throw new Error(`add-keys for ${k}, which the scheduler expects`);
          }
          break;
        case "TaskErredMsg":
          // Also for a fetched task whose transfer failed: not only those assigned here.
          this.assigned.delete(inst.key);
          break;
        case "RescheduleMsg":
          // Only a run the scheduler asked for here can be handed back.
          if (!this.assigned.delete(inst.key) && !this.takenOver.has(inst.key)) {
            throw new Error(`reschedule of ${inst.key}, which the scheduler did not ask for`);
          }
          break;
        case "StealResponseMsg":
          if (inst.state === "ready" || inst.state === "constrained" || inst.state === "waiting") {
            this.assigned.delete(inst.key);
          }
          break;
        case "RequestRefreshWhoHasMsg":
          this.refreshRequests.push([...inst.keys]);
          break;
        default:
          break;
      }
    }
  }

  /**
   * Cheap checks that the worker and its fake shell agree: every task holding a thread
   * has exactly one outstanding Execute, every transfer one outstanding GatherDep, and
   * the scheduler's idea of which tasks are processing here matches the worker's.
   */
  checkConsistency(ws: WorkerState): void {
    const running = ws.allRunningTasks;
    if (running.size !== this.executes.size) {
      throw new Error(
        `running tasks [${[...running].map((t) => t.key)}] != outstanding Executes [${[...this.executes.keys()]}]`,
      );
    }
    for (const ts of running) {
      if (!this.executes.has(ts.key)) throw new Error(`${ts} runs without an Execute`);
    }
    if (ws.inFlightWorkers.size !== this.gathers.size) {
      throw new Error(
        `in-flight workers [${[...ws.inFlightWorkers.keys()]}] != outstanding GatherDeps [${[...this.gathers.keys()]}]`,
      );
    }
    let bytes = 0;
    for (const [w, g] of this.gathers) {
      const keys = ws.inFlightWorkers.get(w);
      if (keys === undefined || keys.size !== g.keys.length || !g.keys.every((k) => keys.has(k))) {
        throw new Error(`in-flight keys from ${w} differ from GatherDep`);
      }
      bytes += g.totalNbytes;
    }
    if (bytes !== ws.transferIncomingBytes) {
      throw new Error(`transferIncomingBytes=${ws.transferIncomingBytes}; expected ${bytes}`);
    }
    for (const w of ws.busyWorkers) {
      if (!this.retries.includes(w)) throw new Error(`busy worker ${w} with no retry pending`);
    }
    for (const ts of ws.tasks.values()) {
      const active = PROCESSING.has(ts.state) || (ts.state === "resumed" && ts.next === "waiting");
      if (active !== this.assigned.has(ts.key) && !this.takenOver.has(ts.key)) {
        throw new Error(
          `${ts}: ${active ? "computing a task the scheduler does not expect" : "the scheduler expects it"}`,
        );
      }
    }
    for (const k of this.assigned.keys()) {
      if (!ws.tasks.has(k)) throw new Error(`the scheduler expects ${k}, the worker forgot it`);
    }
  }
}

/** Whether some dependent of `ts` waits for its data here. */
export function hasWaiter(ts: TaskState): boolean {
  for (const d of ts.dependents) if (d.waitingForData.has(ts)) return true;
  return false;
}

/** Sizes from tiny to over the transfer limits. */
function randomNbytes(rng: Rng): number {
  const r = rng.random();
  if (r < 0.05) return 0;
  if (r < 0.55) return rng.range(1, 1_000);
  if (r < 0.8) return rng.range(1_000, 1_000_000);
  if (r < 0.95) return rng.range(1_000_000, 60_000_000);
  return rng.range(100_000_000, 2_000_000_000);
}
