/**
 * The simulated scheduler shell around `SchedulerState`: it hands the state
 * machine the messages that arrive, routes the messages it returns through
 * the network, removes workers that miss heartbeats for `heartbeatTimeout`
 * (as Dask's `check_worker_ttl`), runs a round of work stealing every
 * `workStealingInterval` (with the `workStealing` option, as Dask's
 * default), a round of the Active Memory Manager every
 * `activeMemoryManagerInterval` (with `activeMemoryManager`, also Dask's
 * default), and, as the steal fault, asks it to steal processing tasks.
 */

import type { SchedulerMessage } from "../protocol/messages.ts";
import type { SchedulerToClientMessage } from "../protocol/messagesClient.ts";
import type { SchedulerToWorkerMessage } from "../protocol/messagesWorker.ts";
import type { SchedulerEvent } from "../scheduler/state/events.ts";
import { SchedulerState } from "../scheduler/state/schedulerState.ts";
import type { TaskState } from "../scheduler/state/taskState.ts";
import { mayBalance } from "../scheduler/state/workStealing.ts";
import { SCHEDULER_ADDRESS, type SimCluster } from "./cluster.ts";
import { errorText, SimFailure } from "./failure.ts";
import { WholeStateChecks } from "./wholeStateChecks.ts";

/** Where a scheduler message to a client goes. */
export type ClientSink = (msg: SchedulerToClientMessage) => void;

/** The scheduler process of a simulated cluster. */
export class SimScheduler {
  /** The scheduler state machine. */
  readonly state: SchedulerState;
  /** `{key: number of workers that died while it was processing there}`. */
  readonly deathsWhileProcessing = new Map<string, number>();
  /** When the state machine is validated whole (with `validate`). */
  private readonly wholeChecks: WholeStateChecks;

  constructor(
    private readonly c: SimCluster,
    private readonly toClient: ClientSink,
  ) {
    this.state = new SchedulerState({
      clock: () => c.queue.now,
      validate: c.options.validate,
      allowedFailures: c.options.allowedFailures,
    });
    this.wholeChecks = new WholeStateChecks(c.options.validateEvery, c.workload.tasks.length);
  }

  /**
   * Start the heartbeat check and, with `workStealing` and
   * `activeMemoryManager`, the rounds of work stealing and of the Active
   * Memory Manager.
   */
  start(): void {
    const o = this.c.options;
    const check = (): void => {
      this.removeSilentWorkers();
      this.c.queue.at(o.heartbeatInterval, check, true);
    };
    this.c.queue.at(o.heartbeatInterval, check, true);
    if (o.workStealing) {
      const round = (): void => {
        this.balance();
        this.c.queue.at(o.workStealingInterval, round, true);
      };
      this.c.queue.at(o.workStealingInterval, round, true);
    }
    if (o.activeMemoryManager) {
      const amm = (): void => {
        this.reduceReplicas();
        this.c.queue.at(o.activeMemoryManagerInterval, amm, true);
      };
      this.c.queue.at(o.activeMemoryManagerInterval, amm, true);
    }
  }

  /**
   * A round of the Active Memory Manager, when some key is held by more than
   * one worker, as the real scheduler's shell runs it.
   */
  reduceReplicas(): void {
    if (this.state.replicatedTasks.size === 0) return;
    this.handle({ kind: "reduce-replicas", stimulusId: this.c.stimulusId("reduce-replicas") });
  }

  /**
   * A round of work stealing, when it may do something (some worker idle,
   * some not), as the real scheduler's shell runs it.
   */
  balance(): void {
    if (!mayBalance(this.state)) return;
    this.handle({ kind: "balance", stimulusId: this.c.stimulusId("balance") });
  }

  /** Workers not heard from for `heartbeatTimeout` are removed (Dask's `check_worker_ttl`). */
  removeSilentWorkers(): void {
    const now = this.c.queue.now;
    const timeout = this.c.options.heartbeatTimeout;
    const silent: string[] = [];
    for (const ws of this.state.workers.values()) {
      if (now - ws.lastSeen > timeout) silent.push(ws.address);
    }
    for (const address of silent) {
      const ws = this.state.workers.get(address);
      if (ws === undefined) continue;
      for (const ts of ws.processing.keys()) {
        this.deathsWhileProcessing.set(ts.key, (this.deathsWhileProcessing.get(ts.key) ?? 0) + 1);
      }
      this.handle({
        kind: "remove-worker",
        worker: address,
        expected: false,
        stimulusId: this.c.stimulusId("check-worker-ttl"),
      });
      const w = this.c.worker(address);
      if (w !== undefined) this.c.streamClosed(w);
    }
  }

  /**
   * The steal fault: pick a random task processing on a random worker and ask
   * the state machine to steal it (to a random other worker half the time).
   * Returns whether a steal was requested.
   */
  stealSomething(): boolean {
    const rng = this.c.rng;
    const busy: string[] = [];
    for (const ws of this.state.workers.values()) {
      if (ws.processing.size > ws.longRunning.size) busy.push(ws.address);
    }
    if (busy.length === 0) return false;
    const victim = this.state.workers.get(rng.pick(busy));
    if (victim === undefined) return false;
    let nth = rng.int(victim.processing.size);
    let chosen: TaskState | null = null;
    for (const ts of victim.processing.keys()) {
      if (nth-- === 0) {
        chosen = ts;
        break;
      }
    }
    if (chosen === null) return false;
    let thief: string | undefined;
    if (rng.chance(0.5)) {
      const others = [...this.state.workers.keys()].filter((a) => a !== victim.address);
      if (others.length > 0) thief = rng.pick(others);
    }
    this.handle({
      kind: "steal-request",
      key: chosen.key,
      victim: victim.address,
      ...(thief !== undefined ? { thief } : {}),
      stimulusId: this.c.stimulusId("steal"),
    });
    return true;
  }

  /** Hand one stimulus to the state machine and send what it returns. */
  handle(ev: SchedulerEvent): void {
    const c = this.c;
    const hooks = c.options.hooks;
    if (hooks?.schedulerStimulus !== undefined) {
      const hooked = hooks.schedulerStimulus(c.hookContext, ev);
      if (hooked === null) return;
      ev = hooked;
    }
    let out: SchedulerMessage[];
    c.replicas?.beforeSchedulerStimulus();
    const t0 = c.timing ? performance.now() : 0;
    try {
      out = this.state.handleStimulus(ev);
    } catch (e) {
      throw new SimFailure(
        "raised",
        `scheduler raised handling ${describeStimulus(ev)}: ${errorText(e)}`,
        "",
        {
          cause: e,
        },
      );
    }
    if (c.timing) c.stats.schedulerMicros += (performance.now() - t0) * 1000;
    c.stats.schedulerStimuli++;
    hooks?.afterScheduler?.(c.hookContext);
    if (c.options.validate && this.wholeChecks.due(this.size())) {
      this.wholeChecks.check("scheduler", `after ${describeStimulus(ev)}`, () =>
        this.state.validateState(),
      );
    }
    c.scatter?.afterSchedulerStimulus(ev, out);
    c.replicas?.afterSchedulerStimulus(ev, out);
    for (let m of out) {
      if (hooks?.schedulerMessage !== undefined) {
        const hooked = hooks.schedulerMessage(c.hookContext, m);
        if (hooked === null) continue;
        m = hooked;
      }
      this.route(m);
    }
  }

  /** Tasks and workers: what a whole check of the state machine goes through. */
  private size(): number {
    return this.state.tasks.size + this.state.workers.size;
  }

  /**
   * Check the state machine whole (`when` says after what) if a stimulus came since
   * it last was: at the end of a phase, or before a run's failure is reported.
   */
  validatePending(when: string): void {
    this.wholeChecks.checkPending("scheduler", when, () => this.state.validateState());
  }

  private route(m: SchedulerMessage): void {
    if (m.to.kind === "client") {
      const msg = m.msg as SchedulerToClientMessage;
      if (msg.op === "replicated" || msg.op === "rebalanced") this.c.replicas?.answerSent(msg);
      else if (msg.op === "workers-retired") this.c.replicas?.retiredSent(msg);
      this.c.net.send(SCHEDULER_ADDRESS, m.to.id, () => this.toClient(msg));
      return;
    }
    const address = m.to.address;
    const worker = this.c.worker(address);
    if (worker === undefined || !worker.alive || worker.cutOff) return; // lost on a dead connection
    const msg = m.msg as SchedulerToWorkerMessage;
    this.c.net.send(SCHEDULER_ADDRESS, address, () => worker.deliver(msg));
  }
}

/** A scheduler stimulus in a few words, for failure messages. */
export function describeStimulus(ev: SchedulerEvent): string {
  switch (ev.kind) {
    case "worker-message":
      return `${ev.msg.op} from ${ev.worker} (${ev.msg.stimulusId})`;
    case "client-message":
      return `${ev.msg.op} from ${ev.msg.clientId} (${ev.msg.stimulusId})`;
    case "remove-worker":
      return `remove-worker ${ev.worker} (${ev.stimulusId})`;
    case "steal-request":
      return `steal-request ${ev.key} from ${ev.victim} (${ev.stimulusId})`;
    case "balance":
      return `balance (${ev.stimulusId})`;
    case "reduce-replicas":
      return `reduce-replicas (${ev.stimulusId})`;
  }
}
