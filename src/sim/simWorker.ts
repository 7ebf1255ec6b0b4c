/**
 * The simulated worker shell: what Dask's `Worker` does around its state
 * machine, on virtual time. It turns scheduler messages into events, runs
 * `Execute` (after a simulated duration, computing a checkable value from its
 * inputs), performs `GatherDep` against peers and serves their `get_data`
 * (answering busy beyond its outgoing limit), retries busy peers later, looks
 * for missing data periodically, sends heartbeats, pauses and resumes, and
 * dies. It never touches the state machine's fields: it reads them, and
 * feeds it events.
 */

import type { TaskRef, TaskSpec } from "../protocol/messagesTaskSpec.ts";
import type { Resources, SchedulerToWorkerMessage } from "../protocol/messagesWorker.ts";
import { ActorHandleGuard, feedGuarded } from "../worker/actorHandleGuard.ts";
import { type PauseChange, PauseReasons, pauseChangeOutputs } from "../worker/pauseReasons.ts";
import { schedulerMessageToEvent } from "../worker/schedulerEvents.ts";
import {
  ExecuteFailureEvent,
  ExecuteSuccessEvent,
  FindMissingEvent,
  GatherDepBusyEvent,
  GatherDepFailureEvent,
  GatherDepNetworkFailureEvent,
  GatherDepSuccessEvent,
  RescheduleEvent,
  RetryBusyWorkerEvent,
  SecedeEvent,
  type StateMachineEvent,
} from "../worker/state/events.ts";
import type { Execute, GatherDep, Instruction } from "../worker/state/instructions.ts";
import type { ValidateStateOptions } from "../worker/state/validation.ts";
import { WorkerState } from "../worker/state/workerState.ts";
import { type UpdateDataResponse, updateDataHandler } from "../worker/updateData.ts";
import type { SimCluster } from "./cluster.ts";
import { errorText, SimFailure } from "./failure.ts";
import { SLOW_LINK_FACTOR } from "./faults.ts";
import { messageForInstruction } from "./translate.ts";
import { computeValue, SimActorRef, SimValue, type TaskParams } from "./values.ts";
import { WholeStateChecks } from "./wholeStateChecks.ts";

function sizeofSimValue(v: unknown): number {
  return v instanceof SimValue || v instanceof SimActorRef ? v.nbytes : 8;
}

function typeNameOf(v: unknown): string {
  return v instanceof SimValue ? "SimValue" : v instanceof SimActorRef ? "Actor" : typeof v;
}

/** A simulated worker process around one `WorkerState`. */
export class SimWorker {
  /** The worker state machine. */
  readonly state: WorkerState;
  /** As the real worker's: see actorHandleGuard.ts. */
  private readonly actorGuard: ActorHandleGuard;
  /** False once dead: it handles nothing more and its data is gone. */
  alive = true;
  /** Why it is paused: the scheduler (retiring it), the pause fault (its memory), or both. */
  private readonly pauses = new PauseReasons();
  /** Outgoing transfers being served. */
  outgoing = 0;
  /** Cut off from the scheduler (the partition fault): messages both ways are lost. */
  cutOff = false;
  /**
   * Keys whose fetch the fetch-error fault failed here (dropped once out of
   * `error`). The state machine errs such a key while its dependents here go on
   * waiting for it, until the scheduler frees them (dask/distributed#7060): a
   * state Dask's `validate_state` rejects, so `validateState` is told to
   * tolerate exactly these keys in `error`, and checks everything else.
   */
  private readonly fetchFailed = new Set<string>();
  /** When the state machine is validated whole (with `validate`). */
  private readonly wholeChecks: WholeStateChecks;

  constructor(
    private readonly c: SimCluster,
    /** The worker's address in the simulated network. */
    readonly address: string,
    /** Its thread count. */
    readonly nthreads: number,
    /** The abstract resources it supplies, `{name: amount}`. */
    readonly resources: Resources,
  ) {
    const o = c.options;
    this.state = new WorkerState({
      address,
      nthreads,
      resources,
      validate: o.validate,
      transferIncomingCountLimit: o.incomingLimit,
      transferMessageBytesLimit: 50_000_000,
      clock: () => c.queue.now,
      sizeof: sizeofSimValue,
      typeName: typeNameOf,
    });
    this.actorGuard = new ActorHandleGuard(this.state);
    this.wholeChecks = new WholeStateChecks(o.validateEvery, c.workload.tasks.length);
  }

  /** Register with the scheduler and start the heartbeat and find-missing timers. */
  start(): void {
    this.c.toScheduler(this.address, {
      op: "register-worker",
      address: this.address,
      nthreads: this.nthreads,
      resources: this.resources,
      // The simulation starts another worker in place of one the scheduler closes.
      nanny: true,
      stimulusId: this.c.stimulusId("register-worker"),
    });
    const o = this.c.options;
    const q = this.c.queue;
    const heartbeat = (): void => {
      if (!this.alive) return;
      this.c.toScheduler(
        this.address,
        { op: "heartbeat-worker", stimulusId: this.c.stimulusId("heartbeat") },
        true,
      );
      q.at(o.heartbeatInterval, heartbeat, true);
    };
    q.at(o.heartbeatInterval * this.c.rng.random(), heartbeat, true);
    const findMissing = (): void => {
      if (!this.alive) return;
      if (this.state.missingDepFlight.size > 0) {
        this.handle(new FindMissingEvent({ stimulusId: this.c.stimulusId("find-missing") }));
      }
      q.at(o.findMissingInterval, findMissing, true);
    };
    q.at(o.findMissingInterval * this.c.rng.random(), findMissing, true);
  }

  /** A message from the scheduler arrived. */
  deliver(msg: SchedulerToWorkerMessage): void {
    if (!this.alive) return;
    if (msg.op === "close-worker") {
      this.c.closeRetired(this);
      return;
    }
    if (msg.op === "pause" || msg.op === "unpause") {
      this.changePause(this.pauses.scheduler(msg.op === "pause"), msg.stimulusId);
      return;
    }
    this.handle(schedulerMessageToEvent(msg));
  }

  /** True while paused, by the scheduler or the pause fault. */
  get paused(): boolean {
    return this.pauses.paused;
  }

  /** True while the pause fault (the memory monitor, in a real worker) holds it paused. */
  get pausedForMemory(): boolean {
    return this.pauses.pausedForMemory;
  }

  /** Carry out a change of the reasons it is paused, as the real worker does. */
  private changePause(change: PauseChange, stimulusId: string): void {
    const { tell, feed } = pauseChangeOutputs(change, stimulusId);
    if (tell !== null) this.c.toScheduler(this.address, tell);
    if (feed !== null) this.handle(feed);
  }

  /** Feed one event to the state machine and carry out its instructions. */
  handle(ev: StateMachineEvent): void {
    if (!this.alive) return;
    const c = this.c;
    const hook = c.options.hooks?.workerEvent;
    if (hook !== undefined) {
      const hooked = hook(c.hookContext, this.address, ev);
      if (hooked === null) return;
      ev = hooked;
    }
    // As the real worker's shell does: see actorHandleGuard.ts.
    feedGuarded(this.actorGuard, [ev], (batch) => {
      for (const e of batch) if (this.alive) this.feed(e);
    });
  }

  /** Feed one event to the state machine and carry out its instructions. */
  private feed(ev: StateMachineEvent): void {
    const c = this.c;
    let instructions: Instruction[];
    const t0 = c.timing ? performance.now() : 0;
    try {
      instructions = this.state.handleStimulus(ev);
    } catch (e) {
      throw new SimFailure(
        "raised",
        `worker ${this.address} raised handling ${ev.cls} (${ev.stimulusId}): ${errorText(e)}`,
        "",
        { cause: e },
      );
    }
    if (c.timing) c.stats.workerMicros += (performance.now() - t0) * 1000;
    c.stats.workerStimuli++;
    if (c.options.validate && this.wholeChecks.due(this.state.tasks.size)) {
      this.wholeChecks.check(`worker ${this.address}`, `after ${ev.cls} (${ev.stimulusId})`, () =>
        this.validateWhole(),
      );
    }
    for (const inst of instructions) this.dispatch(inst, ev);
  }

  /**
   * Check the state machine whole (`when` says after what) if a stimulus came since
   * it last was: at the end of a phase, or before a run's failure is reported.
   */
  validatePending(when: string): void {
    this.wholeChecks.checkPending(`worker ${this.address}`, when, () => this.validateWhole());
  }

  /** `validateState`, the keys the fetch-error fault failed here tolerated in `error`. */
  private validateWhole(): void {
    this.state.validateState(this.toleratedErredInputs());
  }

  /**
   * What `validateState` may find waited for in `error`: the keys the
   * fetch-error fault failed here, and nothing else (see {@link fetchFailed}).
   */
  private toleratedErredInputs(): ValidateStateOptions | undefined {
    for (const key of this.fetchFailed) {
      if (this.state.tasks.get(key)?.state !== "error") this.fetchFailed.delete(key);
    }
    if (this.fetchFailed.size === 0) return undefined;
    return { tolerateErredInput: (ts) => this.fetchFailed.has(ts.key) };
  }

  private dispatch(inst: Instruction, ev: StateMachineEvent): void {
    switch (inst.cls) {
      case "Execute":
        this.execute(inst);
        return;
      case "GatherDep":
        this.gather(inst);
        return;
      case "RetryBusyWorkerLater": {
        const worker = inst.worker;
        this.c.queue.at(this.c.options.retryBusyDelay, () =>
          this.handle(
            new RetryBusyWorkerEvent({
              worker,
              stimulusId: this.c.stimulusId("retry-busy-worker"),
            }),
          ),
        );
        return;
      }
      case "TaskFinishedMsg":
        this.checkActorFinished(inst.key, ev);
        this.c.toScheduler(this.address, messageForInstruction(inst, [ev]));
        return;
      default:
        this.c.toScheduler(this.address, messageForInstruction(inst, [ev]));
    }
  }

  /**
   * A worker reporting an actor finished must hold its object: the scheduler
   * takes it for the worker the actor lives on, and peers then fetch handles
   * naming it. A handle fetched from a peer, or no object at all, would send
   * every call through them to a worker without the actor.
   */
  private checkActorFinished(key: string, ev: StateMachineEvent): void {
    if (!this.c.isActor(key)) return;
    const v = this.state.actors.get(key);
    if (v instanceof SimValue) return;
    const held = this.state.data.get(key);
    const what =
      held instanceof SimActorRef
        ? `only a handle to it on ${held.address}, fetched from a peer, in its data`
        : held instanceof SimValue
          ? "its object in its data, not its actors (peers would get copies, not handles)"
          : v instanceof SimActorRef
            ? `a handle to it on ${v.address}, fetched from a peer, as its object`
            : "no object for it";
    throw new SimFailure(
      "wrong-value",
      `worker ${this.address} reports actor ${key} finished after ${ev.cls} (${ev.stimulusId}), holding ${what}: the scheduler takes it for the worker the actor lives on`,
    );
  }

  // ------------------------------------------------------------------ execute

  private execute(inst: Execute): void {
    const c = this.c;
    const q = c.queue;
    const rng = c.rng;
    const faults = c.options.faults;
    const key = inst.key;
    const ts = this.state.tasks.get(key);
    if (ts === undefined) {
      throw new SimFailure("raised", `worker ${this.address}: Execute(${key}) of an unknown task`);
    }
    const runId = ts.runId;
    const spec = ts.runSpec?.task as TaskSpec | null;
    if (spec === null || spec === undefined) {
      throw new SimFailure("raised", `worker ${this.address}: Execute(${key}) without a run spec`);
    }
    const params = spec.args[0] as TaskParams;
    const inputs: number[] = [];
    let missing: string | null = null;
    let handles = 0;
    let local = 0;
    for (let i = 1; i < spec.args.length; i++) {
      const dep = (spec.args[i] as TaskRef).__weftRef;
      // As the real worker's resolveArgs: `data` first (a value, or the handle of an
      // actor fetched from a peer), then an actor held here, read through its handle.
      const v = this.state.data.get(dep);
      if (v instanceof SimValue) {
        inputs.push(v.v);
      } else if (v instanceof SimActorRef) {
        handles++;
        inputs.push(v.v);
      } else if (v === undefined && this.state.actors.has(dep)) {
        const actor = this.state.actors.get(dep);
        if (!(actor instanceof SimValue)) {
          // The real worker would give the task a handle naming itself, whose calls
          // find no actor object here.
          const held =
            actor instanceof SimActorRef
              ? `a handle to it on ${actor.address}, fetched from a peer`
              : String(actor);
          throw new SimFailure(
            "wrong-value",
            `worker ${this.address}: Execute(${key}) needs actor ${dep}, which the worker holds in its actors without its object: ${held}`,
          );
        }
        local++;
        inputs.push(actor.v);
      } else {
        missing = dep;
        break;
      }
    }
    const start = q.now;
    if (missing !== null) {
      // As Dask's Worker.execute: an input missing from `data` raises KeyError at once.
      const text = `KeyError: '${missing}'`;
      q.at(0, () =>
        this.handle(
          new ExecuteFailureEvent({
            key,
            runId,
            start,
            stop: start,
            exception: { name: "KeyError", message: missing },
            traceback: null,
            exceptionText: text,
            tracebackText: "",
            stimulusId: c.stimulusId("execute-unknown-error"),
          }),
        ),
      );
      return;
    }
    for (let i = 0; i < inputs.length; i++) {
      c.checkRead(`${this.address}: ${key}`, (spec.args[i + 1] as TaskRef).__weftRef, inputs[i]);
    }
    c.stats.actors.handleInputs += handles > 0 ? 1 : 0;
    c.stats.actors.localInputs += local > 0 ? 1 : 0;
    const duration = params.d * rng.uniform(0.5, 1.5);
    if (rng.chance(faults.secede)) {
      c.stats.faults.secede++;
      const after = duration * rng.uniform(0.1, 0.9);
      q.at(after, () =>
        this.handle(
          new SecedeEvent({ key, computeDuration: after, stimulusId: c.stimulusId("secede") }),
        ),
      );
    }
    let outcome: "ok" | "error" | "reschedule" = "ok";
    if (rng.chance(faults.error)) outcome = "error";
    else if (rng.chance(faults.reschedule)) outcome = "reschedule";
    q.at(duration, () => {
      if (!this.alive) return;
      const stop = q.now;
      c.progress();
      c.stats.executions++;
      if (outcome === "error") {
        c.stats.faults.error++;
        const text = `InjectedError: ${key} failed at t=${stop.toFixed(6)} on ${this.address}`;
        c.injectedError(key, text);
        this.handle(
          new ExecuteFailureEvent({
            key,
            runId,
            start,
            stop,
            exception: { name: "InjectedError", message: text },
            traceback: null,
            exceptionText: text,
            tracebackText: "",
            stimulusId: c.stimulusId("task-erred"),
          }),
        );
      } else if (outcome === "reschedule") {
        c.stats.faults.reschedule++;
        this.handle(new RescheduleEvent({ key, stimulusId: c.stimulusId("reschedule") }));
      } else {
        let v = computeValue(key, inputs);
        const hook = c.options.hooks?.taskValue;
        if (hook !== undefined) v = hook(c.hookContext, key, v);
        const value = new SimValue(key, v, params.n);
        this.handle(
          new ExecuteSuccessEvent({
            key,
            runId,
            value,
            start,
            stop,
            nbytes: params.n,
            type: "SimValue",
            stimulusId: c.stimulusId("task-finished"),
          }),
        );
        // The state machine keeps an actor's result in `actors`, not `data`.
        if (this.state.actors.get(key) === value) {
          c.stats.actors.actorRuns++;
          c.actorHeld(key, this.address);
        }
      }
    });
  }

  // ------------------------------------------------------------------ gather

  private networkFailure(worker: string, totalNbytes: number, delay: number): void {
    this.c.queue.at(delay, () =>
      this.handle(
        new GatherDepNetworkFailureEvent({
          worker,
          totalNbytes,
          stimulusId: this.c.stimulusId("gather-dep-network-failure"),
        }),
      ),
    );
  }

  /**
   * The fetch-error fault: the answer arrived but cannot be used (in Dask, the
   * peer's `get_data` raised or the data failed to deserialize). The state
   * machine errs the keys and reports them `task-erred`, which the shell marks
   * `fetchFailed` (`messageForInstruction`).
   */
  private fetchError(worker: string, totalNbytes: number, keys: readonly string[]): void {
    const c = this.c;
    c.stats.faults["fetch-error"]++;
    const text = `InjectedError: fetching ${keys.join(", ")} from ${worker} failed at t=${c.queue.now.toFixed(6)} on ${this.address}`;
    for (const key of keys) {
      c.injectedFetchError(key, text);
      this.fetchFailed.add(key);
    }
    this.handle(
      new GatherDepFailureEvent({
        worker,
        totalNbytes,
        exception: { name: "InjectedError", message: text },
        traceback: null,
        exceptionText: text,
        tracebackText: "",
        stimulusId: c.stimulusId("gather-dep-failure"),
      }),
    );
  }

  private gather(inst: GatherDep): void {
    const c = this.c;
    const net = c.net;
    const { worker, totalNbytes } = inst;
    const keys = [...inst.toGather];
    const peer = c.worker(worker);
    if (c.rng.chance(c.options.faults.network)) {
      c.stats.faults.network++;
      this.networkFailure(worker, totalNbytes, net.latency() * 2);
      return;
    }
    if (peer === undefined || !peer.alive) {
      this.networkFailure(worker, totalNbytes, 0.05 + net.latency());
      return;
    }
    c.queue.at(net.latency(), () => {
      if (!this.alive) return; // nothing comes back to a dead requester
      if (!peer.alive) {
        this.networkFailure(worker, totalNbytes, 0.05);
        return;
      }
      const data = peer.serveGetData(keys);
      if (data === null) {
        c.queue.at(net.latency(), () =>
          this.handle(
            new GatherDepBusyEvent({
              worker,
              totalNbytes,
              stimulusId: c.stimulusId("gather-dep-busy"),
            }),
          ),
        );
        return;
      }
      let bytes = 0;
      for (const v of data.values()) bytes += sizeofSimValue(v);
      let slowdown = 1;
      if (c.rng.chance(c.options.faults.slow)) {
        c.stats.faults.slow++;
        slowdown = c.rng.uniform(SLOW_LINK_FACTOR.least, SLOW_LINK_FACTOR.most);
      }
      c.queue.at(net.transferTime(bytes, slowdown), () => {
        peer.outgoing--;
        if (!peer.alive) {
          this.networkFailure(worker, totalNbytes, 0);
          return;
        }
        if (!this.alive) return;
        if (c.rng.chance(c.options.faults["fetch-error"])) {
          this.fetchError(worker, totalNbytes, keys);
          return;
        }
        c.progress();
        c.stats.transfers++;
        this.handle(
          new GatherDepSuccessEvent({
            worker,
            totalNbytes,
            data,
            stimulusId: c.stimulusId("gather-dep-success"),
          }),
        );
      });
    });
  }

  /**
   * A peer asks for `keys` (Dask's `get_data`): null (busy) beyond the
   * outgoing limit (1 while paused) or when the busy fault strikes; else the
   * values held now, of those keys, and one more outgoing transfer.
   */
  serveGetData(keys: readonly string[]): Map<string, unknown> | null {
    const c = this.c;
    const limit = this.pausedForMemory ? 1 : c.options.outgoingLimit;
    if (this.outgoing >= limit) return null;
    if (c.rng.chance(c.options.faults.busy)) {
      c.stats.faults.busy++;
      return null;
    }
    this.outgoing++;
    const data = new Map<string, unknown>();
    for (const k of keys) {
      const v = this.state.data.get(k);
      if (v !== undefined) {
        data.set(k, v);
      } else if (this.state.actors.has(k) && this.state.tasks.get(k)?.state === "memory") {
        // As the real worker's DataServer: an actor stays here, and what travels is
        // the handle naming it and this worker (read through it, its number).
        const actor = this.state.actors.get(k);
        const n = actor instanceof SimValue || actor instanceof SimActorRef ? actor.v : Number.NaN;
        data.set(k, new SimActorRef(k, this.address, n));
        c.stats.actors.handlesServed++;
      }
    }
    return data;
  }

  // ------------------------------------------------------------------ scatter

  /**
   * A client's `update_data` arrived (its scatter): the real worker's handler,
   * feeding `UpdateDataEvent` (and, for a key it could not store, `FreeKeysEvent`)
   * through {@link handle}. Its answer gives each key's size and type name; null
   * when the worker is dead (the client's connection fails).
   */
  updateData(data: ReadonlyMap<string, unknown>, stimulusId: string): UpdateDataResponse | null {
    if (!this.alive) return null;
    const rpc = updateDataHandler({
      state: this.state,
      refusal: () => null,
      handleStimulus: (...stims) => {
        for (const ev of stims) this.handle(ev);
      },
    });
    return rpc({ data: new Map(data), stimulusId });
  }

  // ------------------------------------------------------------------ faults

  /** The process dies: everything it held is gone, nothing it had scheduled happens. */
  die(): void {
    this.alive = false;
  }

  /** Pause (as the memory monitor does): tell the scheduler, then the state machine. */
  pause(): void {
    if (!this.alive || this.pausedForMemory) return;
    this.changePause(this.pauses.memory(true), this.c.stimulusId("worker-status-change"));
  }

  /** Resume after {@link pause} (unless the scheduler holds it paused too). */
  resume(): void {
    if (!this.alive || !this.pausedForMemory) return;
    this.changePause(this.pauses.memory(false), this.c.stimulusId("worker-status-change"));
  }
}
