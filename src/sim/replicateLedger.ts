/**
 * What a run records about the client's `replicate` requests (the `scatter`
 * workload), so that each answer can be checked against what the machines
 * were told rather than against the scheduler's own bookkeeping.
 *
 * When the scheduler handles a request, the ledger notes the running workers
 * the request allows (by address or host), each key's holders among them, and
 * the copies the scheduler asks for (its `acquire-replicas`, which it checks:
 * allowed workers that hold no copy, as many as `n` holders need). It then
 * follows each copy: it arrives when the scheduler takes the target's
 * `add-keys` with the key in memory; it cannot come when the target is removed
 * first, reports that it could not fetch it (`task-erred`, `fetchFailed`), or
 * the key leaves memory meanwhile. When the scheduler sends `replicated`
 * (checked as it leaves, after the hooks), it must answer a request the client
 * sent, once, after every copy asked for arrived or could not come; each key
 * it says failed must have failed in the run, for the reason it gives; and each
 * key it does not name got every copy, and then (if still in memory) has at
 * least min(n, allowed workers) holders among the allowed workers, counting
 * those that left or dropped their copy since. The copies the request drops
 * (its `remove-replicas`) are checked as it is handled: only of its keys, on
 * allowed workers that held them and run no task needing them, never leaving
 * fewer than min(n, allowed workers) of the holders among the allowed
 * workers, and leaving more only on workers running such a task. Anything
 * else fails the run as `lost`.
 */

import type { SchedulerMessage } from "../protocol/messages.ts";
import type {
  RebalancedMsg,
  RebalanceMsg,
  ReplicatedMsg,
  ReplicateMsg,
  RetireWorkersMsg,
  WorkersRetiredMsg,
} from "../protocol/messagesClient.ts";
import type { SchedulerEvent } from "../scheduler/state/events.ts";
import { ACTOR_STAYS } from "../scheduler/state/replicate.ts";
import type { SchedulerState } from "../scheduler/state/schedulerState.ts";
import { namesWorker } from "../util/address.ts";
import { SimFailure } from "./failure.ts";
import type { SimWorker } from "./simWorker.ts";
import type { ReplicateCount } from "./stats.ts";

/** Why a key of a request did not get every copy asked for. */
export type ReplicateFailureKind =
  | "notInMemory"
  | "noWorker"
  | "targetLeft"
  | "fetchFailed"
  | "keyLost"
  | "actor";

/** The counter of each kind of failure an answer gives. */
const FAILED_COUNT: Readonly<Record<ReplicateFailureKind, ReplicateCount>> = {
  notInMemory: "failedNotInMemory",
  noWorker: "failedNoWorker",
  targetLeft: "failedTargetLeft",
  fetchFailed: "failedFetch",
  keyLost: "failedKeyLost",
  actor: "failedActor",
};

/**
 * The kind of a failure reason in a `replicated` answer, from its wording (the
 * scheduler's `replicate.ts`), or null for a reason of no known kind.
 */
export function failureKind(reason: string): ReplicateFailureKind | null {
  if (/, not in memory$/.test(reason)) return "notInMemory";
  if (/^(no worker is running|none of the workers .+ is running)$/.test(reason)) return "noWorker";
  if (/ left before it had a copy$/.test(reason)) return "targetLeft";
  if (/ could not fetch it: /.test(reason)) return "fetchFailed";
  if (reason === "its result was released or lost meanwhile") return "keyLost";
  if (reason === ACTOR_STAYS) return "actor";
  return null;
}

/** The states of a result lost while still needed: on its way to be computed again. */
const RECOMPUTING: ReadonlySet<string> = new Set(["waiting", "queued", "processing", "no-worker"]);

/** The reasons a `workers-retired` answer may give a worker it did not retire (`retire.ts`). */
const RETIRE_FAILURES: readonly RegExp[] = [
  /^no other running worker can take its copy of /,
  /^it left before its data was moved$/,
  /^it is being retired already$/,
  /^no connected worker matches it$/,
  /^it holds actor \S+, which cannot be moved$/,
];

/** One key of a request: its copies, followed. */
export interface CopyRecord {
  /** The key asked to be copied or moved. */
  readonly key: string;
  /** The key was in memory when the scheduler handled the request. */
  readonly inMemory: boolean;
  /** The key is an actor: never copied, moved nor trimmed (`ACTOR_STAYS`). */
  readonly actor: boolean;
  /** Its holders among the allowed workers then (those it dropped included). */
  readonly holders: Set<string>;
  /** The workers asked to fetch a copy. */
  readonly targets: Set<string>;
  /** Targets whose copy arrived (`add-keys` taken, the key in memory). */
  readonly arrived: Set<string>;
  /** Allowed holders the request asked to drop their copy. */
  readonly dropped: Set<string>;
  /** Targets whose copy cannot come, and why. */
  readonly failed: Map<string, ReplicateFailureKind>;
  /** Allowed workers that left, or said they dropped the key, since the request. */
  readonly excused: Set<string>;
  /** The kinds of failure the run shows for this key. */
  readonly why: Set<ReplicateFailureKind>;
}

/** One `replicate` (or `rebalance`) request of the client. */
export interface ReplicateRecord {
  /** The request as the client sent it. */
  readonly msg: ReplicateMsg | RebalanceMsg;
  /** The scheduler handled it. */
  handled: boolean;
  /** The scheduler answered it. */
  answered: boolean;
  /** The running workers it allows, when the scheduler handled it. */
  allowed: ReadonlySet<string>;
  /** Its keys (each once), by key; for a `rebalance` of every key, those it moves. */
  readonly copies: Map<string, CopyRecord>;
  /** A `rebalance`: the bytes each allowed worker held when it was handled. */
  heldAtStart: ReadonlyMap<string, number>;
  /** A `rebalance`: their mean then. */
  meanAtStart: number;
  /** A `rebalance`: the copies dropped once their move's copy arrived. */
  moves: number;
}

/** The scheduler's workers that are running and that `names` (addresses or hosts) allow. */
function allowedRunning(s: SchedulerState, names: readonly string[] | undefined): Set<string> {
  const named = names === undefined ? null : new Set(names);
  const out = new Set<string>();
  for (const ws of s.workers.values()) {
    if (ws.status !== "running") continue;
    if (named === null || namesWorker(named, ws.address, ws.host)) out.add(ws.address);
  }
  return out;
}

/** True if a task that needs `key` is processing on the worker at `address`, as the scheduler has it. */
function runsTaskNeeding(s: SchedulerState, key: string, address: string): boolean {
  for (const dts of s.tasks.get(key)?.dependents ?? []) {
    if (dts.processingOn?.address === address) return true;
  }
  return false;
}

function holdersOf(s: SchedulerState, key: string): Set<string> {
  const out = new Set<string>();
  const ts = s.tasks.get(key);
  if (ts !== undefined) for (const ws of ts.whoHas) out.add(ws.address);
  return out;
}

function isPending(c: CopyRecord, target: string): boolean {
  return c.targets.has(target) && !c.arrived.has(target) && !c.failed.has(target);
}

/** The client's `replicate` requests and what became of them. */
export class ReplicateLedger {
  /** Every request the client sent, by stimulus id. */
  readonly requests = new Map<string, ReplicateRecord>();
  /** Requests handled and not answered yet: followed after each scheduler stimulus. */
  private readonly open = new Set<ReplicateRecord>();
  /** Called once the scheduler handled a request (for faults aimed at its copies). */
  onHandled: ((r: ReplicateRecord) => void) | null = null;

  /** The client's `retire-workers` requests, by stimulus id: the workers the scheduler closed for each. */
  readonly retirements = new Map<string, { readonly msg: RetireWorkersMsg; closed: Set<string> }>();

  constructor(
    private readonly counts: Record<ReplicateCount, number>,
    private readonly scheduler: SchedulerState,
  ) {}

  /** The scheduler removed the worker at `address`: the copies it was to fetch cannot come. */
  private workerRemoved(address: string): void {
    for (const r of this.open) {
      for (const c of r.copies.values()) {
        if (isPending(c, address)) {
          c.failed.set(address, "targetLeft");
          c.why.add("targetLeft");
        }
        if (r.allowed.has(address)) c.excused.add(address);
      }
    }
  }

  /** The client sends `msg`. */
  sentRetire(msg: RetireWorkersMsg): void {
    this.counts.retirements++;
    this.retirements.set(msg.stimulusId, { msg, closed: new Set() });
  }

  /**
   * Before each scheduler stimulus while the client has retirements under
   * way: each worker's results, with their holders, as the scheduler has them.
   */
  beforeSchedulerStimulus(): void {
    this.heldBefore = null;
    this.actorsBefore = null;
    if (this.retirements.size === 0) return;
    const held = new Map<string, Map<string, number>>();
    const actors = new Map<string, string[]>();
    for (const ws of this.scheduler.workers.values()) {
      const keys = new Map<string, number>();
      for (const ts of ws.hasWhat) keys.set(ts.key, ts.whoHas.size);
      held.set(ws.address, keys);
      if (ws.actors.size > 0)
        actors.set(
          ws.address,
          [...ws.actors].map((ts) => ts.key),
        );
    }
    this.heldBefore = held;
    this.actorsBefore = actors;
  }

  /** What {@link beforeSchedulerStimulus} noted: worker → key → its number of holders. */
  private heldBefore: Map<string, Map<string, number>> | null = null;
  /** What {@link beforeSchedulerStimulus} noted: worker → the actors running or living there. */
  private actorsBefore: Map<string, string[]> | null = null;

  /**
   * Check each `close-worker` of a retirement in `out`: the scheduler no
   * longer lists the worker, and no result it alone held before the stimulus
   * is being computed again (what a result lost while needed becomes). One
   * released or forgotten in the stimulus was no longer needed; a scattered
   * one lost would fail the scatter ledger's checks.
   */
  private followRetirements(out: readonly SchedulerMessage[]): void {
    const s = this.scheduler;
    for (const m of out) {
      if (m.to.kind !== "worker" || m.msg.op !== "close-worker") continue;
      const address = m.to.address;
      const r = this.retirements.get(m.msg.stimulusId);
      const bad = (why: string): SimFailure =>
        new SimFailure("lost", `the scheduler retired ${address} (${m.msg.stimulusId}) ${why}`);
      if (r === undefined) throw bad("for no retire-workers of the client");
      if (s.workers.has(address)) throw bad("but still lists it");
      const actors = this.actorsBefore?.get(address) ?? [];
      if (actors.length > 0) throw bad(`while actors ran or lived on it (${actors.join(", ")})`);
      r.closed.add(address);
      this.workerRemoved(address);
      for (const [key, holders] of this.heldBefore?.get(address) ?? []) {
        const ts = s.tasks.get(key);
        if (holders > 1 || ts === undefined || !RECOMPUTING.has(ts.state)) continue;
        throw bad(`while it held the only copy of ${key}, now ${ts.state} to be computed again`);
      }
    }
  }

  /** The scheduler sends `workers-retired` (checked as it leaves, after the hooks). */
  retiredSent(msg: WorkersRetiredMsg): void {
    const r = this.retirements.get(msg.stimulusId);
    const bad = (why: string): SimFailure =>
      new SimFailure("lost", `the scheduler's workers-retired (${msg.stimulusId}) ${why}`);
    if (r === undefined) throw bad("answers no retire-workers of the client");
    this.retirements.delete(msg.stimulusId);
    const said = [...msg.retired].sort().join(", ");
    const closed = [...r.closed].sort().join(", ");
    if (said !== closed) throw bad(`says it retired [${said}], but closed [${closed}]`);
    for (const f of msg.failed) {
      if (!RETIRE_FAILURES.some((re) => re.test(f.reason))) {
        throw bad(`gives ${f.worker} a reason of no known kind: ${f.reason}`);
      }
    }
    this.counts.retired += msg.retired.length;
    this.counts.retireFailed += msg.failed.length;
  }

  /** The client sends `msg`. */
  sent(msg: ReplicateMsg | RebalanceMsg): void {
    this.counts[msg.op === "replicate" ? "requests" : "rebalances"]++;
    this.requests.set(msg.stimulusId, {
      msg,
      handled: false,
      answered: false,
      allowed: new Set(),
      copies: new Map(),
      heldAtStart: new Map(),
      meanAtStart: 0,
      moves: 0,
    });
  }

  /** Copies of `key` asked for and neither arrived nor failed yet, over the open requests. */
  pendingCopies(key: string): number {
    let n = 0;
    for (const r of this.open) {
      const c = r.copies.get(key);
      if (c !== undefined) for (const t of c.targets) if (isPending(c, t)) n++;
    }
    return n;
  }

  /** Worker `w` dies (or exits): count the copies it takes with it, as target or holder. */
  workerDied(w: SimWorker): void {
    for (const r of this.open) {
      for (const c of r.copies.values()) {
        const pending = [...c.targets].filter((t) => isPending(c, t));
        if (pending.length === 0) continue;
        if (pending.includes(w.address)) this.counts.targetDied++;
        else if (w.state.data.has(c.key)) this.counts.holderDied++;
      }
    }
  }

  /**
   * The scheduler handled `ev` (and passed its validation), returning `out`:
   * record a request, follow its copies.
   */
  afterSchedulerStimulus(ev: SchedulerEvent, out: readonly SchedulerMessage[]): void {
    if (ev.kind === "client-message") {
      const msg = ev.msg;
      if (msg.op === "replicate" || msg.op === "rebalance") {
        const r = this.requests.get(msg.stimulusId);
        if (r !== undefined && !r.handled) this.handled(r, out);
      } else if (msg.op === "client-releases-keys") {
        for (const key of msg.keys) {
          if (this.pendingCopies(key) > 0) this.counts.releasedWhileCopying++;
        }
      }
    }
    // In the scheduler's order: the stimulus itself (a worker removed, keys lost),
    // then the retirements it advanced (workers closed, their data held elsewhere).
    if (this.open.size > 0) this.followStimulus(ev);
    if (ev.kind === "reduce-replicas") this.followReduceReplicas(out);
    this.followRetirements(out);
    if (this.open.size === 0) return;
    this.followMoves(out);
  }

  /**
   * The Active Memory Manager dropped copies (`remove-replicas` of a round): an
   * allowed worker it dropped a key from no longer counts as a holder the
   * request's answer must show, as one that said it dropped the key.
   */
  private followReduceReplicas(out: readonly SchedulerMessage[]): void {
    for (const m of out) {
      if (m.to.kind !== "worker" || m.msg.op !== "remove-replicas") continue;
      const address = m.to.address;
      for (const r of this.open) {
        if (!r.allowed.has(address)) continue;
        for (const key of m.msg.keys) r.copies.get(key)?.excused.add(address);
      }
    }
  }

  /** Follow the copies through what stimulus `ev` did (its own effects, before any retirement it advanced). */
  private followStimulus(ev: SchedulerEvent): void {
    const s = this.scheduler;
    if (ev.kind === "remove-worker") {
      this.workerRemoved(ev.worker);
    } else if (ev.kind === "worker-message") {
      const msg = ev.msg;
      const from = ev.worker;
      if (msg.op === "add-keys") {
        for (const key of msg.keys) {
          const ts = s.tasks.get(key);
          if (ts?.state !== "memory" || !holdersOf(s, key).has(from)) continue;
          for (const r of this.open) {
            const c = r.copies.get(key);
            if (c !== undefined && isPending(c, from)) {
              c.arrived.add(from);
              this.counts.copiesArrived++;
            }
          }
        }
      } else if (msg.op === "task-erred" && msg.fetchFailed === true) {
        for (const r of this.open) {
          const c = r.copies.get(msg.key);
          if (c !== undefined && isPending(c, from)) {
            c.failed.set(from, "fetchFailed");
            c.why.add("fetchFailed");
            this.counts.copyFetchFailed++;
          }
        }
      } else if (msg.op === "release-worker-data") {
        for (const r of this.open) {
          if (r.allowed.has(from)) r.copies.get(msg.key)?.excused.add(from);
        }
      }
    }
    // A key that left memory: none of its pending copies can come.
    for (const r of this.open) {
      for (const c of r.copies.values()) {
        if (s.tasks.get(c.key)?.state === "memory") continue;
        for (const t of c.targets) {
          if (!isPending(c, t)) continue;
          c.failed.set(t, "keyLost");
          c.why.add("keyLost");
        }
      }
    }
  }

  /** The scheduler handled request `r`, returning `out`: note and check its choice of copies. */
  private handled(r: ReplicateRecord, out: readonly SchedulerMessage[]): void {
    const s = this.scheduler;
    const msg = r.msg;
    r.handled = true;
    r.allowed = allowedRunning(s, msg.workers);
    for (const key of msg.keys ?? []) this.copyRecord(r, key);
    for (const m of out) {
      if (m.to.kind !== "worker" || m.msg.op !== "remove-replicas") continue;
      if (m.msg.stimulusId !== msg.stimulusId) continue;
      if (msg.op === "rebalance") {
        throw new SimFailure(
          "lost",
          `rebalance ${msg.stimulusId} asked ${m.to.address} to drop ${m.msg.keys.join(", ")} before any copy arrived`,
        );
      }
      for (const key of m.msg.keys) {
        const c = r.copies.get(key);
        if (c === undefined || !r.allowed.has(m.to.address)) {
          throw new SimFailure(
            "lost",
            `replicate ${msg.stimulusId} asked ${m.to.address} to drop its copy of ${key}, ` +
              (c === undefined ? "which it does not name" : "a worker it does not allow"),
          );
        }
        c.dropped.add(m.to.address);
        // The scheduler forgot the copy when it asked: it held one then.
        c.holders.add(m.to.address);
        this.counts.copiesDropped++;
        this.excuseElsewhere(r, key, m.to.address);
      }
    }
    for (const m of out) {
      if (m.to.kind !== "worker" || m.msg.op !== "acquire-replicas") continue;
      if (m.msg.stimulusId !== msg.stimulusId) continue;
      for (const key of m.msg.whoHas.keys()) {
        // A rebalance of every key names the keys it moves only here.
        const c =
          r.copies.get(key) ??
          (msg.op === "rebalance" && msg.keys === undefined ? this.copyRecord(r, key) : undefined);
        if (c === undefined) {
          throw new SimFailure(
            "lost",
            `${msg.op} ${msg.stimulusId} asked ${m.to.address} for a copy of ${key}, which it does not name`,
          );
        }
        c.targets.add(m.to.address);
        this.counts.copiesAsked++;
      }
    }
    if (msg.op === "replicate") this.checkCopies(r, msg);
    else this.checkMoves(r);
    this.open.add(r);
    this.onHandled?.(r);
  }

  /** The record of `key` in request `r`, made with its state when the scheduler handled `r`. */
  private copyRecord(r: ReplicateRecord, key: string): CopyRecord {
    const known = r.copies.get(key);
    if (known !== undefined) return known;
    const s = this.scheduler;
    const ts = s.tasks.get(key);
    const inMemory = ts?.state === "memory";
    const actor = ts?.actor === true;
    const c: CopyRecord = {
      key,
      inMemory,
      actor,
      holders: new Set([...holdersOf(s, key)].filter((a) => r.allowed.has(a))),
      targets: new Set(),
      arrived: new Set(),
      dropped: new Set(),
      failed: new Map(),
      excused: new Set(),
      why: new Set(),
    };
    if (!inMemory) c.why.add("notInMemory");
    else if (actor) c.why.add("actor");
    else if (r.allowed.size === 0) c.why.add("noWorker");
    r.copies.set(key, c);
    return c;
  }

  /** `address` dropped its copy of `key` for `r`: the other requests waiting for copies of it do not count on it. */
  private excuseElsewhere(r: ReplicateRecord, key: string, address: string): void {
    for (const other of this.open) if (other !== r) other.copies.get(key)?.excused.add(address);
  }

  /** A `replicate`'s copies: as many as `n` holders need, on allowed workers without one. */
  private checkCopies(r: ReplicateRecord, msg: ReplicateMsg): void {
    const want = (allowed: number): number => Math.min(msg.n ?? allowed, allowed);
    for (const c of r.copies.values()) this.checkDrops(r, c, want(r.allowed.size));
    for (const c of r.copies.values()) {
      const bad = [...c.targets].filter((t) => !r.allowed.has(t) || c.holders.has(t));
      const need = c.inMemory && !c.actor ? Math.max(0, want(r.allowed.size) - c.holders.size) : 0;
      if (bad.length > 0 || c.targets.size !== need) {
        throw new SimFailure(
          "lost",
          `replicate ${msg.stimulusId} of ${c.key} (n=${msg.n ?? "all"}, ${c.inMemory ? "in memory" : "not in memory"}, ` +
            `held by ${c.holders.size} of the ${r.allowed.size} allowed running workers) ` +
            `asked for ${c.targets.size} copies (${[...c.targets].join(", ")}), not ${need}` +
            (bad.length > 0
              ? `; ${bad.join(", ")} not allowed, not running or already holding it`
              : ""),
        );
      }
    }
  }

  /**
   * A `rebalance`'s copies: each of a key in memory, to an allowed worker that
   * holds no copy and held less than the allowed workers' mean of bytes when
   * the request was handled, one taker per key.
   */
  private checkMoves(r: ReplicateRecord): void {
    const s = this.scheduler;
    const held = new Map<string, number>();
    let total = 0;
    for (const address of r.allowed) {
      const bytes = s.workers.get(address)?.nbytes ?? 0;
      held.set(address, bytes);
      total += bytes;
    }
    const mean = r.allowed.size === 0 ? 0 : total / r.allowed.size;
    r.heldAtStart = held;
    r.meanAtStart = mean;
    for (const c of r.copies.values()) {
      if (c.targets.size === 0) continue;
      const why = !c.inMemory
        ? "it is not in memory"
        : c.actor
          ? "it is an actor, which stays where it lives"
          : c.targets.size > 1
            ? `it goes to ${c.targets.size} workers`
            : [...c.targets].some((t) => !r.allowed.has(t) || c.holders.has(t))
              ? "the taker is not allowed, not running or already holds it"
              : [...c.targets].some((t) => (held.get(t) as number) >= mean)
                ? `the taker held ${held.get([...c.targets][0])} bytes, not below the mean ${mean}`
                : null;
      if (why !== null) {
        throw new SimFailure(
          "lost",
          `rebalance ${r.msg.stimulusId} moves ${c.key} to ${[...c.targets].join(", ")}: ${why}`,
        );
      }
    }
  }

  /**
   * Check the `remove-replicas` of a rebalance in `out`: each drops the giver's
   * copy of a key the rebalance moves, once its copy arrived, from a worker
   * that held it and more than the mean when the rebalance was handled, runs
   * no task needing it, and leaves another copy.
   */
  private followMoves(out: readonly SchedulerMessage[]): void {
    const s = this.scheduler;
    for (const m of out) {
      if (m.to.kind !== "worker" || m.msg.op !== "remove-replicas") continue;
      const r = this.requests.get(m.msg.stimulusId);
      if (r === undefined || r.msg.op !== "rebalance") continue;
      const giver = m.to.address;
      for (const key of m.msg.keys) {
        const c = r.copies.get(key);
        const ts = s.tasks.get(key);
        const mean = r.meanAtStart;
        const why =
          c === undefined
            ? "a key it does not move"
            : c.arrived.size === 0
              ? "before its copy arrived"
              : !c.holders.has(giver)
                ? "a worker that did not hold it"
                : (r.heldAtStart.get(giver) ?? 0) <= mean
                  ? `a worker that held ${r.heldAtStart.get(giver) ?? 0} bytes, not above the mean ${mean}`
                  : (ts?.whoHas.size ?? 0) === 0
                    ? "its last copy"
                    : runsTaskNeeding(s, key, giver)
                      ? "a worker running a task that needs it"
                      : null;
        if (why !== null) {
          throw new SimFailure(
            "lost",
            `rebalance ${r.msg.stimulusId} asked ${giver} to drop ${key}: ${why}`,
          );
        }
        c?.dropped.add(giver);
        r.moves++;
        this.counts.moves++;
        this.excuseElsewhere(r, key, giver);
      }
    }
  }

  /**
   * Check the copies of `c` that request `r` dropped: held by allowed workers
   * running no task that needs the key, and as many as the holders beyond
   * `want` (at least `want` left) that such a task does not keep.
   */
  private checkDrops(r: ReplicateRecord, c: CopyRecord, want: number): void {
    const s = this.scheduler;
    const runsDependent = (address: string): boolean => runsTaskNeeding(s, c.key, address);
    const bad = (why: string): SimFailure =>
      new SimFailure(
        "lost",
        `replicate ${r.msg.stimulusId} of ${c.key} (n=${(r.msg as ReplicateMsg).n ?? "all"}, held by ` +
          `${[...c.holders].join(", ") || "none"} of the ${r.allowed.size} allowed running workers) ` +
          `dropped the copies on ${[...c.dropped].join(", ") || "none"}: ${why}`,
      );
    const left = [...c.holders].filter((a) => !c.dropped.has(a));
    if (c.actor && c.dropped.size > 0) throw bad("it is an actor, whose copies are never trimmed");
    for (const a of c.dropped) {
      if (holdersOf(s, c.key).has(a)) throw bad(`the scheduler still lists ${a}`);
      if (runsDependent(a)) throw bad(`${a} runs a task that needs it`);
    }
    if (c.dropped.size > 0 && left.length < want)
      throw bad(`${left.length} left, fewer than ${want}`);
    const kept = left.filter(runsDependent).length;
    if (left.length > want && left.length - want > kept) {
      throw bad(`${left.length} left, more than ${want} and only ${kept} run a task that needs it`);
    }
  }

  /**
   * The scheduler sends `msg` to the client (after the hooks, at the moment of the
   * answer): check it against the run.
   */
  answerSent(msg: ReplicatedMsg | RebalancedMsg): void {
    const id = msg.stimulusId;
    const bad = (why: string): SimFailure =>
      new SimFailure("lost", `the scheduler's ${msg.op} (${id}) ${why}`);
    const r = this.requests.get(id);
    const asked = msg.op === "replicated" ? "replicate" : "rebalance";
    if (r === undefined || !r.handled || r.msg.op !== asked)
      throw bad(`answers no ${asked} it handled`);
    if (r.answered) throw bad("answers its request a second time");
    r.answered = true;
    this.open.delete(r);
    for (const c of r.copies.values()) {
      for (const t of c.targets) {
        if (isPending(c, t)) throw bad(`is sent while the copy of ${c.key} on ${t} is on its way`);
      }
    }
    const named = new Set<string>();
    for (const { key, reason } of msg.failed) {
      const c = r.copies.get(key);
      if (c === undefined) throw bad(`names ${key}, which the request does not`);
      if (named.has(key)) throw bad(`names ${key} twice`);
      named.add(key);
      const kind = failureKind(reason);
      if (kind === null) throw bad(`gives ${key} a reason of no known kind: ${reason}`);
      if (!c.why.has(kind)) {
        throw bad(
          `says ${key} failed (${reason}), but in the run ${c.why.size === 0 ? "every copy of it arrived" : `it failed as ${[...c.why].join(", ")}`}`,
        );
      }
      this.counts[FAILED_COUNT[kind]]++;
    }
    for (const c of r.copies.values()) {
      if (named.has(c.key)) continue;
      if (c.why.size > 0) {
        throw bad(
          `does not name ${c.key}, which did not get every copy (${[...c.why].join(", ")})`,
        );
      }
    }
    if (msg.op === "rebalanced") {
      if (msg.moved !== r.moves) throw bad(`says it made ${msg.moved} moves, not ${r.moves}`);
      return;
    }
    const s = this.scheduler;
    const n = (r.msg as ReplicateMsg).n;
    const want = Math.min(n ?? r.allowed.size, r.allowed.size);
    for (const c of r.copies.values()) {
      if (named.has(c.key)) continue;
      if (s.tasks.get(c.key)?.state !== "memory") continue; // it left memory after its copies came
      const holders = [...holdersOf(s, c.key)].filter((a) => r.allowed.has(a));
      const counted = new Set([...holders, ...c.excused]);
      if (counted.size < want) {
        throw bad(
          `does not name ${c.key}, which the scheduler lists on ${holders.length} of the allowed workers ` +
            `(${holders.join(", ")}${c.excused.size > 0 ? `; ${[...c.excused].join(", ")} left or dropped it` : ""}), ` +
            `fewer than min(n=${n ?? "all"}, ${r.allowed.size} allowed running workers) = ${want}`,
        );
      }
    }
  }

  /** The keys of the copies on their way, over the open requests. */
  pendingKeys(): string[] {
    const out = new Set<string>();
    for (const r of this.open) {
      for (const c of r.copies.values()) {
        for (const t of c.targets) if (isPending(c, t)) out.add(c.key);
      }
    }
    return [...out];
  }

  /** The requests handled and not answered, with their pending copies: for a stall's report. */
  describePending(): string[] {
    const out: string[] = [];
    for (const r of this.open) {
      const copies: string[] = [];
      for (const c of r.copies.values()) {
        for (const t of c.targets) if (isPending(c, t)) copies.push(`${c.key} on ${t}`);
      }
      out.push(
        `replicate ${r.msg.stimulusId} unanswered, copies on their way: ${copies.join(", ") || "none"}`,
      );
    }
    for (const r of this.requests.values()) {
      if (!r.handled) out.push(`replicate ${r.msg.stimulusId} not handled by the scheduler yet`);
    }
    return out;
  }
}
