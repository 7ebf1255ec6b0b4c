/**
 * The `scatter` workload: a random DAG some of whose roots are data the
 * client scatters to workers (Dask's `Client.scatter`, direct to workers)
 * rather than tasks it submits, and the simulated client's side of a scatter.
 *
 * Before it submits the graph, the client asks the scheduler for its running
 * workers (again every 0.1 s, for at most a second, until the cluster's
 * initial number of workers runs, and while none does), puts each value on
 * one or two of them with the worker rpc `update_data` (the real worker's
 * handler, through the simulated worker's stimulus path), and collects the
 * answers: a dead worker's connection fails after 50 ms, as does, at the
 * `network` fault's rate, the request itself. Values that no worker stored go
 * to another of the workers that did not fail, while there is one, then to a
 * worker of a fresh list from the scheduler (twice at most); after that they
 * are dropped (the scheduler never hears of them). The client then tells the
 * scheduler where the others are (`update-data`, naming the workers that
 * answered) and submits the graph when `data-updated` comes back; the
 * scattered keys are not in it, only named as dependencies.
 *
 * The scatter's own random stream also makes the race between a scatter and
 * a worker's death likelier than the death fault alone would (about one run in
 * a hundred): with that fault on, in a quarter of the runs a worker dies right
 * after it stored its values, before the scheduler hears of them, so that
 * `update-data` names a departed worker; and in a fifth of the runs the client
 * is slow to send `update-data` (1 to 3 s), so that the scheduler may have
 * removed such a worker by then (its copies are dropped; a key left without
 * any is rejected). Holders dying while tasks wait for their values need no
 * help: the death fault kills one in about two runs of five.
 */

import type { DataUpdatedMsg, ScatteredKey } from "../protocol/messagesClient.ts";
import { SCATTERED_DATA_LOST } from "../scheduler/state/transitions.ts";
import { parseUpdateDataResponse, type UpdateDataResponse } from "../worker/updateData.ts";
import { SCHEDULER_ADDRESS, type SimCluster } from "./cluster.ts";
import { SimFailure } from "./failure.ts";
import type { SimRng } from "./rng.ts";
import type { ScatterLedger } from "./scatterLedger.ts";
import type { SimScheduler } from "./simScheduler.ts";
import type { SimWorker } from "./simWorker.ts";
import { expectedValues, SimValue } from "./values.ts";
import type { SimTask, Workload } from "./workload.ts";

/** The share of a scatter workload's roots that are scattered is drawn from this range. */
export const SCATTERED_ROOTS: readonly [number, number] = [0.3, 0.5];

/** Chance (death fault on) that a worker dies right after storing scattered values. */
const KILL_AFTER_STORE = 0.25;

/** Chance that the client is slow to send `update-data`, and the range of its delay (seconds). */
const SLOW_REGISTER = 0.2;
const SLOW_REGISTER_DELAY: readonly [number, number] = [1, 3];

/** How many times the client asks for workers again for values every worker it tried failed. */
const MAX_REASKS = 2;

/** How many times the client asks for the workers while fewer than the cluster's run (0.1 s apart). */
const MAX_WAITS = 10;

/**
 * `dag` with some of its roots (tasks without dependencies) scattered: a share
 * drawn from {@link SCATTERED_ROOTS}, at least one. A scattered root is renamed
 * `scattered-<index>`; its value is what the checks expect of that key
 * (`expectedValues`), as for a computed root.
 */
export function scatterRoots(dag: Workload, rng: SimRng): Workload {
  const roots: number[] = [];
  dag.tasks.forEach((t, i) => {
    if (t.deps.length === 0) roots.push(i);
  });
  const share = rng.uniform(SCATTERED_ROOTS[0], SCATTERED_ROOTS[1]);
  const chosen = new Set<number>();
  for (const i of roots) if (rng.chance(share)) chosen.add(i);
  if (chosen.size === 0 && roots.length > 0) chosen.add(rng.pick(roots));
  const tasks = dag.tasks.map(
    (t, i): SimTask =>
      chosen.has(i)
        ? {
            key: `scattered-${i}`,
            fn: "scattered",
            deps: [],
            nbytes: t.nbytes,
            duration: 0,
            scattered: true,
          }
        : t,
  );
  return { ...dag, name: `scatter(${dag.tasks.length})`, tasks };
}

/** Per task of `w`, 1 when it is, or depends on, one of `keys`. */
export function needingAny(w: Workload, keys: ReadonlySet<string>): Uint8Array {
  const out = new Uint8Array(w.tasks.length);
  for (let i = 0; i < w.tasks.length; i++) {
    const t = w.tasks[i];
    if (keys.has(t.key) || t.deps.some((d) => out[d] === 1)) out[i] = 1;
  }
  return out;
}

/**
 * The client's scatter of a workload's scattered keys, then `then` (the
 * graph's submission). It also keeps what the client knows of their loss: the
 * keys no worker stored, those the scheduler rejected, and those it reported
 * lost (`cancelled-keys` with `SCATTERED_DATA_LOST`).
 */
export class SimScatter {
  /** The scattered keys, in workload order, and their values. */
  private readonly keys: string[] = [];
  private readonly values = new Map<string, SimValue>();
  /** key → the workers that stored it. */
  private readonly holders = new Map<string, string[]>();
  /** key → size and type name, from the first worker that stored it. */
  private readonly sizes = new Map<string, { nbytes: number; typename: string }>();
  /** Workers whose `update_data` failed: they get no more values. */
  private readonly failedWorkers = new Set<string>();
  private candidates: string[] = [];
  /** Answers from the scheduler with too few workers so far. */
  private waits = 0;
  /** Fresh lists of workers asked for after every candidate failed. */
  private reasks = 0;
  /** Requests of the current round not answered yet. */
  private outstanding = 0;
  /** The worker to kill right after it stores its values, if any. */
  private killAfterStore: string | null = null;
  /** The pending `update-data`: its stimulus id and keys. */
  private pendingUpdate: { readonly id: string; readonly keys: readonly string[] } | null = null;
  /** Scattered keys the client knows are lost (see the class comment). */
  readonly knownLost = new Set<string>();

  constructor(
    private readonly c: SimCluster,
    private readonly scheduler: SimScheduler,
    private readonly clientId: string,
    workload: Workload,
    /** The scatter's own random stream: the other workloads' runs do not draw from it. */
    private readonly rng: SimRng,
    private readonly ledger: ScatterLedger,
    private readonly then: () => void,
  ) {
    const expected = expectedValues(workload);
    workload.tasks.forEach((t, i) => {
      if (t.scattered !== true) return;
      this.keys.push(t.key);
      this.values.set(t.key, new SimValue(t.key, expected[i], t.nbytes));
    });
  }

  /** Start: put every value on workers. */
  start(): void {
    this.c.stats.scatter.values += this.keys.length;
    this.askWorkers((running) => {
      // Each value to one or two of them.
      const plan = new Map<string, string[]>();
      for (const key of this.keys) {
        const n = this.rng.range(1, Math.min(2, running.length));
        for (const address of this.rng.sample(running, n)) addTo(plan, address, key);
      }
      if (this.c.options.faults.death > 0 && this.rng.chance(KILL_AFTER_STORE)) {
        this.killAfterStore = this.rng.pick([...plan.keys()]);
      }
      this.sendRound(plan);
    });
  }

  /**
   * Ask the scheduler for its running workers (as the real client does), then
   * `then(them)`. At first, again after 0.1 s while fewer run than the cluster
   * started with (for at most a second), or none.
   */
  private askWorkers(then: (running: string[]) => void): void {
    const c = this.c;
    c.net.send(this.clientId, SCHEDULER_ADDRESS, () => {
      const running: string[] = [];
      for (const ws of this.scheduler.state.workers.values()) {
        if (ws.status === "running") running.push(ws.address);
      }
      c.net.send(SCHEDULER_ADDRESS, this.clientId, () => {
        const few = running.length < c.options.workers && this.waits < MAX_WAITS;
        if (running.length === 0 || few) {
          this.waits++;
          c.queue.at(0.1, () => this.askWorkers(then));
          return;
        }
        this.candidates = running;
        then(running);
      });
    });
  }

  private sendRound(plan: ReadonlyMap<string, readonly string[]>): void {
    this.outstanding = plan.size;
    const stimulusId = this.c.stimulusId("scatter");
    for (const [address, keys] of plan) this.sendTo(address, keys, stimulusId);
  }

  /** `update_data` to `address`, and its answer (or the failure of the connection) back. */
  private sendTo(address: string, keys: readonly string[], stimulusId: string): void {
    const c = this.c;
    const fail = (delay: number): void => {
      c.queue.at(delay, () => this.answered(address, keys, null));
    };
    if (this.rng.chance(c.options.faults.network)) {
      c.stats.faults.network++;
      fail(2 * c.net.latency());
      return;
    }
    c.net.send(this.clientId, address, () => {
      const w = c.worker(address);
      const data = new Map<string, unknown>(keys.map((k) => [k, this.values.get(k)]));
      const answer = w?.updateData(data, stimulusId) ?? null;
      if (w === undefined || answer === null) {
        fail(0.05 + c.net.latency());
        return;
      }
      c.net.send(address, this.clientId, () => this.answered(address, keys, answer));
      if (address === this.killAfterStore) {
        this.killAfterStore = null;
        // Within about two latencies: before update-data reaches the scheduler, or about then.
        c.queue.at(this.rng.uniform(0, 4) * c.options.latency, () => this.kill(w));
      }
    });
  }

  private answered(
    address: string,
    keys: readonly string[],
    answer: UpdateDataResponse | null,
  ): void {
    const counts = this.c.stats.scatter;
    if (answer === null) {
      this.failedWorkers.add(address);
      counts.unreachable++;
    } else {
      const parsed = parseUpdateDataResponse(answer, keys, address);
      for (const [key, size] of Object.entries(parsed.stored)) {
        addTo(this.holders, key, address);
        if (!this.sizes.has(key)) this.sizes.set(key, size);
        counts.copies++;
      }
      for (const [key, why] of Object.entries(parsed.failed)) {
        // Every value is new to every worker it is sent to: nothing may refuse it.
        throw new SimFailure("lost", `${address} did not store scattered key ${key}: ${why}`);
      }
    }
    if (--this.outstanding > 0) return;
    this.afterRound();
  }

  /**
   * Every answer of a round is in: what no worker stored goes to another
   * candidate, or to a worker of a fresh list; at last it is dropped. Then
   * register the rest.
   */
  private afterRound(): void {
    const todo = this.keys.filter((k) => !this.holders.has(k) && !this.ledger.gone(k));
    if (todo.length > 0) {
      this.candidates = this.candidates.filter((a) => !this.failedWorkers.has(a));
      const resend = (candidates: readonly string[]): void => {
        const plan = new Map<string, string[]>();
        for (const key of todo) addTo(plan, this.rng.pick(candidates), key);
        this.c.stats.scatter.resent += todo.length;
        this.sendRound(plan);
      };
      if (this.candidates.length > 0) {
        resend(this.candidates);
        return;
      }
      if (this.reasks < MAX_REASKS) {
        this.reasks++;
        this.failedWorkers.clear();
        this.askWorkers(resend);
        return;
      }
      for (const key of todo) {
        this.ledger.dropped(key, "every worker it was sent to failed");
        this.knownLost.add(key);
      }
    }
    this.register();
  }

  /** `update-data` for the keys that workers stored (if any), else on with the graph. */
  private register(): void {
    const entries: ScatteredKey[] = [];
    for (const key of this.keys) {
      const workers = this.holders.get(key);
      const size = this.sizes.get(key);
      if (workers !== undefined && size !== undefined) {
        entries.push({ key, workers, nbytes: size.nbytes, typename: size.typename });
      }
    }
    if (entries.length === 0) {
      this.then();
      return;
    }
    const stimulusId = this.c.stimulusId("update-data");
    this.pendingUpdate = { id: stimulusId, keys: entries.map((e) => e.key) };
    const msg = { op: "update-data", keys: entries, clientId: this.clientId, stimulusId } as const;
    const send = (): void =>
      this.c.net.send(this.clientId, SCHEDULER_ADDRESS, () =>
        this.scheduler.handle({ kind: "client-message", msg }),
      );
    if (this.rng.chance(SLOW_REGISTER)) {
      this.c.queue.at(this.rng.uniform(SLOW_REGISTER_DELAY[0], SLOW_REGISTER_DELAY[1]), send);
    } else {
      send();
    }
  }

  /** The scheduler's `data-updated`: true if it answers this scatter (then the graph goes). */
  dataUpdated(msg: DataUpdatedMsg): boolean {
    const pending = this.pendingUpdate;
    if (pending === null || pending.id !== msg.stimulusId) return false;
    this.pendingUpdate = null;
    this.ledger.dataUpdated(pending.keys, msg.rejected);
    for (const { key } of msg.rejected) this.knownLost.add(key);
    this.then();
    return true;
  }

  /** The scheduler cancelled `keys` for the client, saying why. */
  cancelled(keys: readonly string[], reason: string): void {
    if (reason !== SCATTERED_DATA_LOST) return;
    for (const key of keys) if (this.values.has(key)) this.knownLost.add(key);
  }

  /** The death fault, aimed: at least one worker survives, and none dies once the client has everything. */
  private kill(w: SimWorker): void {
    const c = this.c;
    if (!c.injecting || !w.alive || w.cutOff || c.healthyWorkers().length < 2) return;
    c.kill(w);
  }
}

function addTo(m: Map<string, string[]>, key: string, item: string): void {
  const list = m.get(key);
  if (list === undefined) m.set(key, [item]);
  else list.push(item);
}
