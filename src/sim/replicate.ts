/**
 * The simulated client's `replicate` requests (Dask's `Client.replicate`), in
 * the `scatter` workload: in half of the runs (the `replicate` option; drawn
 * from a random stream of its own, so that the other runs replay as they did
 * before), the client asks
 * the scheduler to copy some of the values it scattered to more workers once
 * `data-updated` registered them, and, now and then, a computed wanted key
 * once it hears it is in memory (at most {@link MAX_REQUESTS} requests a run).
 * Each asks for `n` = 2 or 3 holders, or (a third of them by default, the
 * `replicateOne` option, drawn from a stream of their own) for one, which drops the copies the key's fetches left
 * on other workers; a third of them name the workers
 * that may hold copies (addresses or hosts of workers the scheduler lists,
 * dead ones included).
 *
 * The client awaits every answer, as it awaits its results: it is not done
 * while one is missing (a request never answered is then a deadlock), and an
 * answer to no pending request of its own fails the run. The scheduler's side
 * is checked by the {@link ReplicateLedger}.
 *
 * The same stream makes the races of replication likelier than the faults
 * alone would: with the death fault on, a request's copies see one of their
 * targets killed (a fifth of the requests) or one of the key's holders (another
 * fifth) within about two latencies after the scheduler asks for them; and the
 * client releases a wanted key right after asking to replicate it in a
 * quarter of the requests.
 */

import type {
  RebalancedMsg,
  RebalanceMsg,
  ReplicatedMsg,
  ReplicateMsg,
  RetireWorkersMsg,
  WorkersRetiredMsg,
} from "../protocol/messagesClient.ts";
import { addressHostOrNull } from "../util/address.ts";
import { SCHEDULER_ADDRESS, type SimCluster } from "./cluster.ts";
import { SimFailure } from "./failure.ts";
import type { ReplicateLedger, ReplicateRecord } from "./replicateLedger.ts";
import type { SimRng } from "./rng.ts";
import type { SimScheduler } from "./simScheduler.ts";
import type { SimWorker } from "./simWorker.ts";

/** At most this many requests a run. */
export const MAX_REQUESTS = 4;

/** Chance that the client replicates a computed wanted key when it hears it is in memory. */
const ON_MEMORY = 0.2;

/** Chance that a request names the workers that may hold copies. */
const NAMED_WORKERS = 1 / 3;

/** Chances (death fault on) that a target, or else a holder, of a request's copies is killed. */
const KILL_TARGET = 0.2;
const KILL_HOLDER = 0.2;

/** Chance that the client releases a wanted key right after asking to replicate it. */
const RELEASE_AFTER = 0.25;

/** The host of a simulated worker's address. */
function hostOf(address: string): string {
  return addressHostOrNull(address) ?? address;
}

/** The client's `replicate` requests. */
export class SimReplicator {
  /** This run's client replicates. */
  readonly active: boolean;
  /** Stimulus ids of the requests not answered yet. */
  private readonly unanswered = new Set<string>();
  /** The aimed kill of each request, by stimulus id. */
  private readonly aims = new Map<string, "target" | "holder">();
  private sent = 0;
  /** The client closed: it asks for nothing more. */
  private closed = false;

  constructor(
    private readonly c: SimCluster,
    private readonly scheduler: SimScheduler,
    private readonly clientId: string,
    /** Replicate's own random stream: the runs that do not replicate draw one number from it. */
    private readonly rng: SimRng,
    /**
     * Chooses the rebalances, and the requests for one copy: a stream apart, so
     * that the other requests are those they were.
     */
    private readonly kindRng: SimRng,
    private readonly ledger: ReplicateLedger,
    /** Release a wanted key (the client's own release; nothing if it no longer wants it). */
    private readonly release: (key: string) => void,
    /** True while `key` is a wanted key the client has not released. */
    private readonly holds: (key: string) => boolean,
  ) {
    this.active = rng.chance(c.options.replicate);
    if (this.active) ledger.onHandled = (r) => this.aim(r);
  }

  /** Requests not answered yet. */
  get pending(): number {
    return this.unanswered.size;
  }

  /** The client closes. */
  close(): void {
    this.closed = true;
  }

  /** The scheduler registered the scattered keys `registered`: replicate some of them. */
  afterScatter(registered: readonly string[]): void {
    if (!this.active || this.closed || registered.length === 0) return;
    const keys = this.rng.sample(registered, this.rng.range(1, Math.min(3, registered.length)));
    this.request(keys);
  }

  /** The client heard that its wanted computed key `key` is in memory. */
  keyInMemory(key: string): void {
    if (!this.active || this.closed || this.sent >= MAX_REQUESTS) return;
    if (!this.rng.chance(ON_MEMORY)) return;
    this.request([key]);
  }

  private request(keys: readonly string[]): void {
    if (this.sent >= MAX_REQUESTS) return;
    const rng = this.rng;
    const c = this.c;
    this.sent++;
    const drawn = rng.range(2, 3);
    const kind = this.kindRng;
    const rebalance = kind.chance(c.options.rebalance);
    const n = !rebalance && kind.chance(c.options.replicateOne) ? 1 : drawn;
    const known = [...this.scheduler.state.workers.keys()];
    const retire = !rebalance && known.length > 0 && kind.chance(c.options.retire);
    let workers: string[] | undefined;
    if (rng.chance(NAMED_WORKERS)) {
      const known = [...this.scheduler.state.workers.keys()];
      if (known.length > 0) {
        const names = rng.chance(0.5) ? [...new Set(known.map(hostOf))] : known;
        workers = rng.sample(names, rng.range(1, Math.min(3, names.length)));
      }
    }
    const stimulusId = c.stimulusId("replicate");
    if (c.options.faults.death > 0) {
      const x = rng.random();
      if (x < KILL_TARGET) this.aims.set(stimulusId, "target");
      else if (x < KILL_TARGET + KILL_HOLDER) this.aims.set(stimulusId, "holder");
    }
    if (retire) {
      // A worker the scheduler lists, to be retired instead of this request's copies.
      const msg: RetireWorkersMsg = {
        op: "retire-workers",
        workers: [kind.pick(known)],
        clientId: this.clientId,
        stimulusId,
      };
      this.unanswered.add(stimulusId);
      this.ledger.sentRetire(msg);
      c.net.send(this.clientId, SCHEDULER_ADDRESS, () =>
        this.scheduler.handle({ kind: "client-message", msg }),
      );
    }
    const msg: ReplicateMsg | RebalanceMsg | null = retire
      ? null
      : rebalance
        ? {
            op: "rebalance",
            // Half of them move any key in memory, whichever client's.
            ...(kind.chance(0.5) ? {} : { keys }),
            ...(workers !== undefined ? { workers } : {}),
            clientId: this.clientId,
            stimulusId,
          }
        : {
            op: "replicate",
            keys,
            n,
            ...(workers !== undefined ? { workers } : {}),
            clientId: this.clientId,
            stimulusId,
          };
    if (msg !== null) {
      this.unanswered.add(stimulusId);
      this.ledger.sent(msg);
      c.net.send(this.clientId, SCHEDULER_ADDRESS, () =>
        this.scheduler.handle({ kind: "client-message", msg }),
      );
    }
    if (rng.chance(RELEASE_AFTER)) {
      const wanted = keys.filter((k) => this.holds(k));
      if (wanted.length > 0) {
        const key = rng.pick(wanted);
        // Within about two latencies of the request: while its copies are on their way.
        c.queue.at(rng.uniform(0, 4) * c.options.latency, () => this.release(key));
      }
    }
  }

  /** The scheduler's `replicated` arrived: it must answer a request of this client not answered yet. */
  answered(msg: ReplicatedMsg | RebalancedMsg | WorkersRetiredMsg): void {
    if (!this.unanswered.delete(msg.stimulusId)) {
      throw new SimFailure(
        "lost",
        `the client got replicated (${msg.stimulusId}), which answers no request of its own waiting for an answer`,
      );
    }
    this.aims.delete(msg.stimulusId);
    this.c.progress();
  }

  /** The scheduler handled request `r`: maybe kill one of its targets or of its keys' holders. */
  private aim(r: ReplicateRecord): void {
    const what = this.aims.get(r.msg.stimulusId);
    if (what === undefined) return;
    this.aims.delete(r.msg.stimulusId);
    const candidates = new Set<string>();
    for (const copy of r.copies.values()) {
      if (copy.targets.size === 0) continue;
      if (what === "target") for (const t of copy.targets) candidates.add(t);
      else {
        const ts = this.scheduler.state.tasks.get(copy.key);
        for (const ws of ts?.whoHas ?? []) candidates.add(ws.address);
      }
    }
    if (candidates.size === 0) return;
    const c = this.c;
    const address = this.rng.pick([...candidates]);
    c.queue.at(this.rng.uniform(0, 4) * c.options.latency, () => {
      const w = c.worker(address);
      if (w !== undefined) this.kill(w);
    });
  }

  /** The death fault, aimed: at least one worker survives, and none dies once the client has everything. */
  private kill(w: SimWorker): void {
    const c = this.c;
    if (!c.injecting || !w.alive || w.cutOff || c.healthyWorkers().length < 2) return;
    c.kill(w);
  }
}
