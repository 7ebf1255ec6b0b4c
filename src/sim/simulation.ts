/**
 * One simulated cluster run: a `SchedulerState`, N `WorkerState`s and a
 * client, joined by a simulated network on virtual time, with faults. The
 * run ends when the client has every result and the cluster is quiet (then
 * the results are checked, the client releases everything, and every machine
 * must end empty), or fails: a machine raised or broke its invariants, the
 * results were wrong or lost, or nothing progressed while work remained.
 */

import type { WorkerToSchedulerMessage } from "../protocol/messagesWorker.ts";
import { FIRE_AND_FORGET_CLIENT } from "../scheduler/state/clientInfo.ts";
import type { TaskState } from "../scheduler/state/taskState.ts";
import { plural } from "../util/plural.ts";
import { unawaitedCallback } from "../util/unawaitedCallback.ts";
import {
  type CheckInput,
  checkEmpty,
  checkOutcomes,
  checkPauses,
  checkReplicas,
} from "./checks.ts";
import { SCHEDULER_ADDRESS, type SimCluster } from "./cluster.ts";
import { storiesOf, stuckKeys } from "./diagnose.ts";
import { EventQueue } from "./eventQueue.ts";
import { type FailureKind, SimFailure } from "./failure.ts";
import { startFaults } from "./faultInjector.ts";
import { SLOW_LINK_FACTOR } from "./faults.ts";
import { guardedHooks } from "./guardedHooks.ts";
import type { HookContext, SimHooks } from "./hooks.ts";
import { Network } from "./network.ts";
import {
  type ResolvedSimOptions,
  resolveSimOptions,
  SIM_DEFAULTS,
  type SimOptions,
} from "./options.ts";
import { replayCommand } from "./replay.ts";
import { ReplicateLedger } from "./replicateLedger.ts";
import { SimRng } from "./rng.ts";
import { ScatterLedger } from "./scatterLedger.ts";
import { SimClient } from "./simClient.ts";
import { SimScheduler } from "./simScheduler.ts";
import { SimWorker } from "./simWorker.ts";
import { SimStats } from "./stats.ts";
import { expectedValues } from "./values.ts";
import { variantHooks } from "./variants.ts";
import type { Workload } from "./workload.ts";
import { withActors, workloadFor } from "./workloadFor.ts";

/** How a run ended. */
export interface SimResult {
  /** The run's seed: the same seed and options replay it exactly. */
  readonly seed: number;
  /** True when every check held. */
  readonly ok: boolean;
  /** Why it failed, or null. */
  readonly failure: {
    readonly kind: FailureKind;
    readonly message: string;
    /** Stories of the keys involved, for deadlocks and lost keys. */
    readonly details: string;
  } | null;
  /** The workload's name, e.g. `random(40)`. */
  readonly workload: string;
  /** Tasks in the workload. */
  readonly tasks: number;
  /** Workers that took part (initial and replacements). */
  readonly workers: number;
  /** The run's counters. */
  readonly stats: SimStats;
  /** The options, defaults filled in (hooks left out). */
  readonly options: ResolvedSimOptions;
  /** The command that replays this run. */
  readonly command: string;
}

/** A simulated cluster, built from options; {@link run} it once. */
export class Simulation implements SimCluster {
  /** The run's options, defaults filled in. */
  readonly options: ResolvedSimOptions;
  /** The events on virtual time. */
  readonly queue = new EventQueue();
  readonly rng: SimRng;
  /** The simulated network. */
  readonly net: Network;
  /** The run's counters. */
  readonly stats = new SimStats();
  /** What the run's hooks may look at. */
  readonly hookContext: HookContext;
  readonly timing: boolean;
  /** The run has hooks of its own (not a variant's): its replay command cannot give them. */
  private readonly customHooks: boolean;
  /** The tasks the client submits. */
  readonly workload: Workload;
  /** The simulated scheduler. */
  readonly scheduler: SimScheduler;
  /** The simulated client. */
  readonly client: SimClient;
  /** The record of the scattered keys (the `scatter` workload), or null. */
  readonly scatter: ScatterLedger | null;
  /** The record of the client's `replicate` requests (the `scatter` workload), or null. */
  readonly replicas: ReplicateLedger | null;
  /** Every worker that ever started, by address, dead ones included. */
  readonly workers = new Map<string, SimWorker>();
  /** Error texts injected, per key. */
  readonly injected = new Map<string, Set<string>>();
  /** Error texts injected into fetches, per fetched key. */
  readonly injectedFetch = new Map<string, Set<string>>();
  /** The workers each actor was held on (its task ran there), per actor key. */
  readonly actorHomes = new Map<string, Set<string>>();
  /** The correct number of every task, by index in the workload. */
  private readonly expected: Uint32Array;
  /** Each task's index in the workload, by key. */
  private readonly index = new Map<string, number>();
  /** The workload's actor tasks, by key. */
  private readonly actorKeys = new Set<string>();
  /** `compute` until the client has everything, then `release`. */
  phase: "compute" | "release" = "compute";

  private nextWorker = 0;
  private nextStimulus = 0;
  private lastProgress = 0;
  /** The window without progress, virtual time and events after which the run is given up (see {@link runLimits}). */
  private readonly limits: RunLimits;

  constructor(options: SimOptions, o: { timing?: boolean } = {}) {
    const resolved = resolveSimOptions(options);
    const hooks: SimHooks | null = resolved.hooks ?? variantHooks(resolved.variant);
    // A hook's throw is the run's failure, in its result: run() does not throw it.
    this.options = { ...resolved, hooks: hooks === null ? null : guardedHooks(hooks) };
    this.customHooks = resolved.hooks !== null;
    this.timing = o.timing ?? false;
    const root = SimRng.forSeed(this.options.seed);
    const graph = workloadFor(this.options, root.fork(1));
    this.rng = root.fork(2);
    // The client's streams, then the actors' (forked last: the streams before it are
    // what they always were).
    const clientRngs = [3, 4, 5, 6, 7, 8, 9].map((salt) => root.fork(salt));
    const actorRng = root.fork(10);
    this.workload = withActors(graph, this.options.actors, actorRng);
    for (const t of this.workload.tasks) if (t.actor === true) this.actorKeys.add(t.key);
    this.expected = expectedValues(this.workload);
    this.limits = runLimits(this.options, this.workload);
    for (let i = 0; i < this.workload.tasks.length; i++)
      this.index.set(this.workload.tasks[i].key, i);
    this.stats.actors.actors = this.actorKeys.size;
    this.net = new Network(this.queue, this.rng, this.options.latency, this.options.bandwidth);
    this.scheduler = new SimScheduler(this, (msg) => this.client.receive(msg));
    const queue = this.queue;
    const scheduler = this.scheduler.state;
    this.hookContext = {
      scheduler,
      get now() {
        return queue.now;
      },
    };
    this.scatter = this.workload.tasks.some((t) => t.scattered === true)
      ? new ScatterLedger(this.workload, this.stats.scatter, scheduler, (a) => this.workers.get(a))
      : null;
    this.replicas =
      this.scatter !== null ? new ReplicateLedger(this.stats.replicate, scheduler) : null;
    // The scatter's stream, then replicate's, then the one choosing the requests that trim
    // copies, are forked last: the streams before them are what they always were.
    this.client = new SimClient(
      this,
      this.scheduler,
      this.workload,
      clientRngs[0],
      clientRngs[1],
      clientRngs[2],
      clientRngs[3],
      clientRngs[4],
      clientRngs[5],
      clientRngs[6],
    );
  }

  // ----------------------------------------------------------------- SimCluster

  worker(address: string): SimWorker | undefined {
    return this.workers.get(address);
  }

  toScheduler(from: string, msg: WorkerToSchedulerMessage, periodic = false): void {
    if (this.workers.get(from)?.cutOff === true) return;
    this.net.send(
      from,
      SCHEDULER_ADDRESS,
      () => this.scheduler.handle({ kind: "worker-message", worker: from, msg }),
      periodic,
    );
  }

  stimulusId(prefix: string): string {
    return `${prefix}-${++this.nextStimulus}`;
  }

  progress(): void {
    this.lastProgress = this.queue.now;
  }

  injectedError(key: string, text: string): void {
    addText(this.injected, key, text);
  }

  injectedFetchError(key: string, text: string): void {
    addText(this.injectedFetch, key, text);
  }

  checkRead(reader: string, key: string, v: number): void {
    const i = this.index.get(key);
    const want = i === undefined ? undefined : this.expected[i];
    if (v !== want) {
      throw new SimFailure(
        "wrong-value",
        `${reader} read ${key} = ${v}, expected ${want ?? "no such key"}`,
      );
    }
  }

  isActor(key: string): boolean {
    return this.actorKeys.has(key);
  }

  actorHeld(key: string, address: string): void {
    addText(this.actorHomes, key, address);
  }

  // ----------------------------------------------------------------- workers

  /** Start a new worker (a replacement keeps its predecessor's threads and resources). */
  startWorker(nthreads: number, resources: Record<string, number>): SimWorker {
    const n = this.nextWorker++;
    const address = `tcp://10.0.${n % 4}.1:${9000 + n}`;
    const w = new SimWorker(this, address, nthreads, resources);
    this.workers.set(address, w);
    w.start();
    return w;
  }

  /** Live workers, in start order. */
  liveWorkers(): SimWorker[] {
    const out: SimWorker[] = [];
    for (const w of this.workers.values()) if (w.alive) out.push(w);
    return out;
  }

  /** Live workers still connected to the scheduler, in start order. */
  healthyWorkers(): SimWorker[] {
    return this.liveWorkers().filter((w) => !w.cutOff);
  }

  /** Kill `w`; a replacement starts after `replaceDelay`. */
  kill(w: SimWorker): void {
    this.retire(w);
    this.stats.faults.death++;
    this.queue.at(this.options.replaceDelay, () => {
      this.startWorker(w.nthreads, { ...w.resources });
    });
  }

  /**
   * Cut `w` off from the scheduler; it goes on computing and serving peers
   * until it notices (within 0.5 to 1.5 heartbeat timeouts) and exits.
   */
  partition(w: SimWorker): void {
    w.cutOff = true;
    this.stats.faults.partition++;
    const o = this.options;
    this.queue.at(this.rng.uniform(0.5, 1.5) * o.heartbeatTimeout, () => {
      if (!w.alive) return;
      this.retire(w);
      this.queue.at(o.replaceDelay, () => {
        this.startWorker(w.nthreads, { ...w.resources });
      });
    });
  }

  /**
   * The scheduler removed `w` for missing heartbeats and closed its stream (as
   * the real scheduler aborts the connection): a worker still alive and
   * connected learns of it one latency later and exits (Dask's worker closes on
   * losing its scheduler; its nanny starts a new one); a replacement starts
   * after `replaceDelay`. Without this a worker whose heartbeats were only late
   * would stay, holding results, unknown to the scheduler forever.
   */
  streamClosed(w: SimWorker): void {
    if (!w.alive || w.cutOff) return;
    this.queue.at(this.net.latency(), () => {
      if (!w.alive) return;
      this.retire(w);
      this.queue.at(this.options.replaceDelay, () => {
        this.startWorker(w.nthreads, { ...w.resources });
      });
    });
  }

  /** The scheduler retired `w`: it closes (its data held elsewhere) and is replaced after `replaceDelay`. */
  closeRetired(w: SimWorker): void {
    if (!w.alive) return;
    w.die();
    this.queue.at(this.options.replaceDelay, () => {
      this.startWorker(w.nthreads, { ...w.resources });
    });
  }

  /** `w` dies (killed, or it exits): what it held is gone. */
  private retire(w: SimWorker): void {
    this.scatter?.workerDied(w);
    this.replicas?.workerDied(w);
    w.die();
  }

  /** Faults stop once the client has everything. */
  get injecting(): boolean {
    return this.phase === "compute" && !this.client.done;
  }

  // ----------------------------------------------------------------- run

  private setUp(): void {
    const o = this.options;
    const res = this.workload.workerResources;
    for (let i = 0; i < o.workers; i++) {
      const nthreads = this.rng.range(1, o.maxThreads);
      const gets = res !== undefined && (i === 0 || this.rng.chance(0.5));
      this.startWorker(nthreads, gets ? { ...res } : {});
    }
    this.scheduler.start();
    this.client.submit();
    startFaults(this);
  }

  /**
   * A live worker has tasks in `missing`: it will ask the scheduler where they are
   * at its next find-missing (a periodic event, which `pendingWork` does not count),
   * and be told to free those the scheduler forgot. Only a copy fetched for
   * `acquire-replicas` is missing with no task of its own needing it (its key freed
   * meanwhile); the release phase waits for that answer before it checks for leaks.
   */
  private workersStillAsking(): boolean {
    for (const w of this.workers.values()) {
      if (w.alive && w.state.missingDepFlight.size > 0) return true;
    }
    return false;
  }

  private deadStillRegistered(): boolean {
    for (const address of this.scheduler.state.workers.keys()) {
      const w = this.workers.get(address);
      if (w === undefined || !w.alive) return true;
    }
    return false;
  }

  /** What the checks read of this run. */
  checkInput(): CheckInput {
    return {
      workload: this.workload,
      expected: this.expected,
      index: this.index,
      scheduler: this.scheduler,
      workers: this.workers,
      client: this.client,
      injected: this.injected,
      injectedFetch: this.injectedFetch,
      allowedFailures: this.options.allowedFailures,
      scatter: this.scatter,
      counts: this.stats.scatter,
      actorHomes: this.actorHomes,
      actorCounts: this.stats.actors,
    };
  }

  private stalled(): SimFailure {
    const pending = [...this.client.status].filter(([, st]) => st === "pending").map(([k]) => k);
    const s = this.scheduler.state;
    const unanswered =
      this.phase === "compute" && (this.client.replicator?.pending ?? 0) > 0
        ? (this.replicas?.describePending() ?? [])
        : [];
    const copying = this.replicas?.pendingKeys() ?? [];
    const fired = this.phase === "compute" ? this.fired() : [];
    const firedDone = fired.filter((ts) => ts.state === "memory" || ts.state === "erred");
    const keys =
      pending.length > 0
        ? stuckKeys(s, pending)
        : unanswered.length > 0 && copying.length > 0
          ? copying
          : firedDone.length > 0
            ? firedDone.map((ts) => ts.key)
            : stuckKeys(s, fired.length > 0 ? fired.map((ts) => ts.key) : [...s.tasks.keys()]);
    const details = storiesOf(s, this.workers.values(), keys);
    const idle = this.queue.pendingWork === 0;
    const what =
      this.phase === "release"
        ? "the cluster did not settle after the client released everything"
        : pending.length > 0
          ? `${plural(pending.length, "wanted key")} still pending (${pending.slice(0, 5).join(", ")})`
          : unanswered.length > 0
            ? `the client awaits the answer to replicate: ${unanswered.join("; ")}`
            : firedDone.length > 0
              ? "keys fired and forgotten are done, but the scheduler never let them go"
              : fired.length > 0
                ? `keys fired and forgotten never ran to their end (${fired
                    .slice(0, 5)
                    .map((ts) => ts.key)
                    .join(", ")})`
                : "the client has everything but the cluster never became quiet";
    return new SimFailure(
      idle || pending.length > 0 || unanswered.length > 0 ? "deadlock" : "livelock",
      `${idle ? "the event queue ran dry" : `no progress for ${this.limits.stallTimeout} virtual seconds`}: ${what}; stuck: ${keys.join(", ")}`,
      details,
    );
  }

  /**
   * The keys the scheduler's `fire-and-forget` stand-in still wants: the compute
   * phase ends only once every key the client fired and forgot ran to its end and
   * was let go (or was cancelled, or lost a task it needs, as any wanted key may be).
   */
  private fired(): TaskState[] {
    const standIn = this.scheduler.state.clients.get(FIRE_AND_FORGET_CLIENT);
    return standIn === undefined ? [] : [...standIn.wantsWhat];
  }

  /**
   * Run to the end and report. A failure of the cluster, a hook's throw among
   * them (`raised`, naming the hook), is in the result, not thrown. `onProgress(done,
   * total)` (wanted keys the client holds the outcome of, of all) is called every
   * few thousand events, for long runs; what it throws ends the run and is
   * rethrown, as the simulator's own bugs are; a promise it returns that rejects is
   * a process warning (`unawaitedCallback`). A simulation runs once: a later
   * call returns the same result, or, after a run ended by a throw, throws saying so.
   */
  run(onProgress?: (done: number, total: number) => void): SimResult {
    if (this.result !== null) return this.result;
    if (this.started) {
      throw new Error(
        "Simulation.run: this simulation's run was ended by a throw (of its onProgress, or the simulator's own): make a new Simulation to run again",
      );
    }
    this.started = true;
    this.result = this.runOnce(
      onProgress && unawaitedCallback(onProgress, "Simulation.run: onProgress"),
    );
    return this.result;
  }

  /** What {@link run} reports once it ran; null before. */
  private result: SimResult | null = null;
  /** Set as {@link run} begins. */
  private started = false;

  private runOnce(onProgress?: (done: number, total: number) => void): SimResult {
    let failure: SimResult["failure"] = null;
    try {
      this.loop(onProgress);
    } catch (caught) {
      if (!(caught instanceof SimFailure)) throw caught;
      const e = this.invalidStateBefore(caught);
      let details = e.details;
      if (details === "" && (e.kind === "raised" || e.kind === "invalid-state")) {
        details = causeChain(e, e.message);
      }
      failure = { kind: e.kind, message: e.message, details };
    }
    this.stats.events = this.queue.fired;
    this.stats.virtualTime = this.queue.now;
    this.stats.stealsRequested = this.scheduler.state.workStealing.requested;
    this.stats.stealsConfirmed = this.scheduler.state.workStealing.confirmed;
    this.stats.replicasDropped = this.scheduler.state.replicasDropped;
    const { hooks: _hooks, ...options } = this.options;
    return {
      seed: this.options.seed,
      ok: failure === null,
      failure,
      workload: this.workload.name,
      tasks: this.workload.tasks.length,
      workers: this.workers.size,
      stats: this.stats,
      options: { ...options, hooks: null },
      command: replayCommand(this.options, this.customHooks),
    };
  }

  /**
   * With `validate`, check whole every live machine that had a stimulus since it
   * last was (see wholeStateChecks.ts); throws the failure of the first that is
   * not valid.
   */
  private validatePending(when: string): void {
    if (!this.options.validate) return;
    this.scheduler.validatePending(when);
    for (const w of this.workers.values()) if (w.alive) w.validatePending(when);
  }

  /**
   * The failure to report for `failure`: a state gone wrong that a whole check
   * not yet due would have caught first is the better cause of a deadlock or a
   * wrong result. A machine that raised is left as it was: its state is half
   * changed.
   */
  private invalidStateBefore(failure: SimFailure): SimFailure {
    if (failure.kind === "invalid-state" || failure.kind === "raised") return failure;
    try {
      this.validatePending(`before the run failed (${failure.kind}: ${failure.message})`);
    } catch (e) {
      if (e instanceof SimFailure && e.kind === "invalid-state") return e;
      throw e;
    }
    return failure;
  }

  /**
   * What a run given up at a limit its workload raised (see {@link runLimits}) adds to
   * its message: where the limit came from, which the options do not say.
   */
  private raisedLimitHit(): string {
    const { limits, options: o, queue: q } = this;
    if (q.now > limits.maxTime && limits.maxTime !== o.maxTime) {
      return ` (past this workload's limit of ${Number(limits.maxTime.toFixed(3))} virtual seconds, three times its tasks run one after another)`;
    }
    if (q.fired >= limits.maxEvents && limits.maxEvents !== o.maxEvents) {
      return ` (this workload's limit of ${limits.maxEvents} events, ${EVENTS_PER_TASK} a task)`;
    }
    return "";
  }

  private loop(onProgress?: (done: number, total: number) => void): void {
    const q = this.queue;
    const o = this.options;
    this.setUp();
    let releasedAt = 0;
    for (;;) {
      if (onProgress !== undefined && (q.fired & 4095) === 0) {
        const { done, total } = this.client.progress;
        onProgress(done, total);
      }
      const quiet = q.pendingWork === 0 && !this.deadStillRegistered();
      if (this.phase === "compute") {
        if (this.client.done && quiet && this.fired().length === 0) {
          this.validatePending("at the end of the compute phase");
          const x = this.checkInput();
          checkReplicas(x);
          checkOutcomes(x);
          checkPauses(x);
          if (!o.releasePhase) return;
          this.phase = "release";
          releasedAt = q.now;
          this.client.close();
          continue;
        }
        if (q.now - this.lastProgress > this.limits.stallTimeout) throw this.stalled();
      } else {
        if (quiet && !this.workersStillAsking()) {
          this.validatePending("at the end of the release phase");
          checkEmpty(this.checkInput());
          return;
        }
        if (q.now - releasedAt > this.limits.stallTimeout) throw this.stalled();
      }
      if (q.fired >= this.limits.maxEvents || q.now > this.limits.maxTime) {
        throw new SimFailure(
          "livelock",
          `gave up after ${q.fired} events at t=${q.now.toFixed(3)}${this.raisedLimitHit()}`,
        );
      }
      if (!q.step()) throw this.stalled();
    }
  }
}

/** Events a task may take, at most, before the default limit on events gives the run up. */
const EVENTS_PER_TASK = 50;

/**
 * The default no-progress window spans at least this many of the workload's longest
 * task: room for it to run again elsewhere after its worker died, more than once, and
 * for the heartbeats that tell the scheduler so.
 */
const STALL_TASKS = 10;

/**
 * The default no-progress window spans at least this many transfers of the workload's
 * largest value on a link the `slow` fault slows the most (when it is on).
 */
const SLOW_TRANSFERS = 2;

/** What gives a run up: see {@link runLimits}. */
interface RunLimits {
  /** Virtual seconds without progress that count as a deadlock (or livelock). */
  readonly stallTimeout: number;
  readonly maxTime: number;
  readonly maxEvents: number;
}

/**
 * The limits that give a run up as a livelock. The defaults, 3,600 virtual seconds and
 * 5,000,000 events, are far beyond any built-in workload at its default size, but not
 * beyond a big graph: a chain of 100,000 tasks of 50 ms needs 5,000 virtual seconds on
 * the fastest cluster, a million tasks some 7,000,000 events, and such a run ended
 * "livelock" while it went on right. A default limit is therefore raised to three times
 * what the workload takes run one task after another (its compute, and the transfer
 * of each result) and to {@link EVENTS_PER_TASK} events a task. Likewise the window
 * without progress that counts as a deadlock, 60 virtual seconds, is far beyond a
 * task of a built-in workload but not beyond a graph's (`--task-duration 70s`: 16 of
 * 20 seeds of a two-task graph ended "livelock" while a task ran): it is raised to
 * {@link STALL_TASKS} times the longest a task takes (run at its slowest, 1.5 times
 * its duration as simWorker.ts draws it, and its result sent once) and to
 * {@link SLOW_TRANSFERS} transfers of its largest value on a link the `slow` fault
 * slows the most, when that fault is on (a 4 MB value at 1 MB/s takes up to 400 s so:
 * 19 of 200 seeds of `random` ended "livelock" with every default fault). A limit the
 * options set to anything else is kept as set. (The window in whole seconds: the
 * failure's message says it.)
 */
function runLimits(o: ResolvedSimOptions, w: Workload): RunLimits {
  let serial = 0;
  let longest = 0;
  let largest = 0;
  for (const t of w.tasks) {
    serial += t.duration + t.nbytes / o.bandwidth + 2 * o.latency;
    longest = Math.max(longest, 1.5 * t.duration + t.nbytes / o.bandwidth + 2 * o.latency);
    largest = Math.max(largest, t.nbytes);
  }
  const slowest = o.faults.slow > 0 ? SLOW_LINK_FACTOR.most : 1;
  const slowestTransfer = (slowest * largest) / o.bandwidth + 2 * o.latency;
  return {
    stallTimeout:
      o.stallTimeout === SIM_DEFAULTS.stallTimeout
        ? Math.max(
            o.stallTimeout,
            Math.ceil(STALL_TASKS * longest),
            Math.ceil(SLOW_TRANSFERS * slowestTransfer),
          )
        : o.stallTimeout,
    maxTime: o.maxTime === SIM_DEFAULTS.maxTime ? Math.max(o.maxTime, 3 * serial) : o.maxTime,
    maxEvents:
      o.maxEvents === SIM_DEFAULTS.maxEvents
        ? Math.max(o.maxEvents, EVENTS_PER_TASK * w.tasks.length)
        : o.maxEvents,
  };
}

function addText(texts: Map<string, Set<string>>, key: string, text: string): void {
  let set = texts.get(key);
  if (set === undefined) {
    set = new Set();
    texts.set(key, set);
  }
  set.add(text);
}

/** The causes of `e` that `shown` does not already include. */
function causeChain(e: Error, shown: string): string {
  const lines: string[] = [];
  let cur: unknown = e.cause;
  while (cur instanceof Error) {
    if (!shown.includes(cur.message)) lines.push(`${cur.name}: ${cur.message}`);
    cur = cur.cause;
  }
  return lines.join("\n");
}

/**
 * Run one simulated cluster: its result, a failure of the cluster (a hook's throw
 * among them) in it; see {@link Simulation.run}.
 */
export function simulate(options: SimOptions, o: { timing?: boolean } = {}): SimResult {
  return new Simulation(options, o).run();
}
