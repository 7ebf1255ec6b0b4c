import { keySplit } from "../util/keySplit.ts";
import { manyListenersAbortController } from "../util/manyListenersAbort.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import { schedulerMessage } from "./schedulerMessage.ts";
import type { StateMachineEvent } from "./state/events.ts";
import { type Instruction, isSendMessageToScheduler } from "./state/instructions.ts";
import type { WorkerState } from "./state/workerState.ts";

/** A metric's name: the activity labels, then the measured label and unit. */
export type MetricName = readonly (string | null)[];

/** Where an asynchronous instruction reports what it spent its time on. */
export interface MetricsLedger {
  /** Record `value` `unit`s under `label` (e.g. "deserialize", seconds). */
  record(label: string, value: number, unit?: string): void;
}

/** Options passed to every asynchronous instruction. */
export interface AsyncInstructionContext {
  /** Aborted by `close()`. */
  signal: AbortSignal;
  /** Fine-grained metrics of the instruction. */
  ledger: MetricsLedger;
}

/**
 * Metric names, interned: the same parts give the same frozen array, found
 * through a trie of Maps without building a key (once per task and metric).
 */
class MetricNames {
  readonly root: TrieNode = { children: new Map(), parts: [], name: null };

  /** The node of `parts` below `node`. */
  child(node: TrieNode, part: string | null): TrieNode {
    let next = node.children.get(part);
    if (next === undefined) {
      next = { children: new Map(), parts: [...node.parts, part], name: null };
      node.children.set(part, next);
    }
    return next;
  }

  /** The name of the activity at `activity`, then `label` and `unit`. */
  intern(activity: TrieNode, label: string, unit: string): MetricName {
    const node = this.child(this.child(activity, label), unit);
    if (node.name === null) node.name = Object.freeze(node.parts);
    return node.name;
  }
}

interface TrieNode {
  readonly children: Map<string | null, TrieNode>;
  /** The path from the root (built once per node). */
  readonly parts: (string | null)[];
  name: MetricName | null;
}

/** The abort reason `close()` gives: instructions that see it should stop quietly. */
export class WorkerClosed extends Error {
  override name = "WorkerClosed";
}

/** An instruction that starts asynchronous work. */
type AsyncInstruction = Extract<
  Instruction,
  { cls: "GatherDep" | "Execute" | "RetryBusyWorkerLater" }
>;

/**
 * An asynchronous instruction under way: its context and metrics ledger as
 * well as a node of {@link RunningList} (one object per instruction, as there
 * is one per task).
 */
class Running implements AsyncInstructionContext, MetricsLedger {
  promise: Promise<void> = DONE;
  /** The event of an instruction that ended at once, until it is settled. */
  stim: StateMachineEvent | null = null;
  prev: Running | null = null;
  next: Running | null = null;
  /** `[label, value, unit, label, value, unit, …]`, flat; null until the first record. */
  entries: (string | number)[] | null = null;

  constructor(
    readonly inst: AsyncInstruction,
    readonly signal: AbortSignal,
    readonly start: number,
    readonly spanId: string | null,
  ) {}

  get ledger(): MetricsLedger {
    return this;
  }

  record(label: string, value: number, unit = "seconds"): void {
    // Most instructions record one entry: an array of exactly three, where a
    // `push` onto an empty array would reserve seventeen slots.
    if (this.entries === null) this.entries = [label, value, unit];
    else this.entries.push(label, value, unit);
  }

  /** As Dask names the asyncio task: `execute(key)`, `gather_dep(worker, {keys})`. */
  get name(): string {
    const inst = this.inst;
    switch (inst.cls) {
      case "GatherDep": {
        const keys = [...inst.toGather].slice(0, 27).join(", ");
        const shown = keys.length > 80 ? `${keys.slice(0, 77)}...` : keys;
        return `gather_dep(${inst.worker}, {${shown}})`;
      }
      case "Execute":
        return `execute(${inst.key})`;
      default:
        return `retry_busy_worker_later(${inst.worker})`;
    }
  }
}

const DONE: Promise<void> = Promise.resolve();
const NO_ENTRIES: readonly (string | number)[] = [];

/**
 * The instructions under way, as an intrusive doubly linked list: adding and
 * removing one (twice per task) costs no hashing.
 */
class RunningList {
  private head: Running | null = null;
  size = 0;

  add(r: Running): void {
    r.next = this.head;
    if (this.head !== null) this.head.prev = r;
    this.head = r;
    this.size++;
  }

  delete(r: Running): void {
    if (r.prev === null && this.head !== r) return; // not in the list
    if (r.prev !== null) r.prev.next = r.next;
    else this.head = r.next;
    if (r.next !== null) r.next.prev = r.prev;
    r.prev = null;
    r.next = null;
    this.size--;
  }

  /** The instructions, oldest first. */
  toArray(): Running[] {
    const out: Running[] = [];
    for (let r = this.head; r !== null; r = r.next) out.push(r);
    return out.reverse();
  }
}

/**
 * Runs the instructions of a {@link WorkerState}: messages to the scheduler go to
 * {@link batchedSend}; `Execute`, `GatherDep` and `RetryBusyWorkerLater` start
 * asynchronous work whose resulting event is fed back to the state machine. The port
 * of Dask's `BaseWorker`; subclasses provide the I/O (the real worker, test mock-ups,
 * the simulator).
 */
export abstract class BaseWorker {
  /** The worker's state machine, which this shell feeds and obeys. */
  readonly state: WorkerState;
  private readonly asyncInstructions = new RunningList();
  private readonly metricNames = new MetricNames();
  private closeCalled = false;
  /**
   * Aborted by `close()`: one for every instruction (they are only ever
   * cancelled all together), as creating an AbortController per instruction
   * costs more than the rest of starting one.
   */
  private readonly closeController = manyListenersAbortController();
  /** Clock used for metrics (seconds). */
  protected readonly now: () => number;

  constructor(state: WorkerState, now: () => number = () => performance.now() / 1000) {
    this.state = state;
    this.now = now;
  }

  /** Number of asynchronous instructions under way. */
  get asyncInstructionCount(): number {
    return this.asyncInstructions.size;
  }

  /**
   * Forward stimuli to the state machine and carry out the instructions it returns.
   */
  handleStimulus(...stims: StateMachineEvent[]): void {
    this.handleStimuli(stims);
  }

  /** {@link handleStimulus} for an array of stimuli (any number: not spread). */
  handleStimuli(stims: readonly StateMachineEvent[]): void {
    const instructions = this.state.handleStimuli(stims);
    for (const inst of instructions) this.dispatch(inst, stims);
  }

  private dispatch(inst: Instruction, stims: readonly StateMachineEvent[]): void {
    if (isSendMessageToScheduler(inst)) {
      this.batchedSend(schedulerMessage(inst, stims));
      return;
    }
    switch (inst.cls) {
      case "GatherDep":
        if (inst.toGather.size === 0) throw new Error("GatherDep without keys");
        this.startAsyncInstruction(inst, null);
        return;
      case "Execute":
        this.startAsyncInstruction(inst, this.state.tasks.get(inst.key)?.spanId ?? null);
        return;
      case "RetryBusyWorkerLater":
        this.startAsyncInstruction(inst, null);
        return;
      default: {
        const unknown: never = inst;
        throw new TypeError(`unknown instruction ${String(unknown)}`);
      }
    }
  }

  private run(r: Running): StateMachineEvent | Promise<StateMachineEvent> {
    const inst = r.inst;
    switch (inst.cls) {
      case "GatherDep":
        return this.gatherDep(inst.worker, inst.toGather, inst.totalNbytes, inst.stimulusId, r);
      case "Execute":
        return this.execute(inst.key, inst.stimulusId, r);
      case "RetryBusyWorkerLater":
        return this.retryBusyWorkerLater(inst.worker, r);
    }
  }

  /**
   * Start `inst` now, as Dask starts its asyncio task; its event is fed back
   * later, never inside the stimulus that gave the instruction. An instruction
   * that ended at once (a synchronous task on the inline executor) is settled
   * in a microtask of its own, without the promises of an async function.
   */
  private startAsyncInstruction(inst: AsyncInstruction, spanId: string | null): void {
    const running = new Running(inst, this.closeController.signal, this.now(), spanId);
    this.asyncInstructions.add(running);
    let result: StateMachineEvent | Promise<StateMachineEvent>;
    try {
      result = this.run(running);
    } catch (err) {
      result = Promise.reject(err);
    }
    if (result instanceof Promise) {
      running.promise = this.settleWhenDone(running, result);
      return;
    }
    running.stim = result;
    this.settling.push(running);
    queueMicrotask(this.settleNext);
  }

  private async settleWhenDone(
    running: Running,
    pending: Promise<StateMachineEvent>,
  ): Promise<void> {
    let stim: StateMachineEvent;
    try {
      stim = await pending;
    } catch (err) {
      this.asyncInstructions.delete(running);
      if (running.signal.aborted) return; // close() cancelled it
      this.onAsyncInstructionError(running.name, err);
      return;
    }
    this.settle(running, stim);
  }

  /**
   * Instructions that ended at once, oldest first from `settlingHead`: one is
   * settled per microtask, so other microtasks still run between two tasks.
   */
  private settling: (Running | undefined)[] = [];
  private settlingHead = 0;

  private readonly settleNext = (): void => {
    const running = this.settling[this.settlingHead];
    this.settling[this.settlingHead++] = undefined;
    if (this.settlingHead === this.settling.length) {
      this.settling.length = 0;
      this.settlingHead = 0;
    }
    if (running === undefined) return;
    const stim = running.stim as StateMachineEvent;
    running.stim = null;
    this.settle(running, stim);
  };

  private settle(running: Running, stim: StateMachineEvent): void {
    this.asyncInstructions.delete(running);
    if (running.signal.aborted) return;
    this.handleStimulus(stim);
    this.finalizeMetrics(stim, running);
  }

  /**
   * An asynchronous instruction threw instead of returning an event: a bug in the
   * shell (instructions must turn every failure into an event). Rethrown by default.
   */
  protected onAsyncInstructionError(name: string, err: unknown): void {
    queueMicrotask(() => {
      throw new Error(`async instruction ${name} should never throw`, { cause: err });
    });
  }

  private finalizeMetrics(stim: StateMachineEvent, running: Running): void {
    const names = this.metricNames;
    let activity: TrieNode;
    let coarseTime: string | false;
    switch (stim.cls) {
      case "GatherDepSuccessEvent": {
        activity = names.child(names.root, "gather-dep");
        coarseTime = stim.data.size > 0 ? "cancelled" : "missing";
        for (const key of stim.data.keys()) {
          // At least one key was fetched and stored in memory.
          if (this.state.tasks.get(key)?.state === "memory") {
            coarseTime = false;
            break;
          }
        }
        break;
      }
      case "GatherDepFailureEvent":
      case "GatherDepNetworkFailureEvent":
        activity = names.child(names.root, "gather-dep");
        coarseTime = "failed";
        break;
      case "GatherDepBusyEvent":
        activity = names.child(names.root, "gather-dep");
        coarseTime = "busy";
        break;
      case "ExecuteSuccessEvent": {
        const ts = this.state.tasks.get(stim.key);
        // A task's prefix is keySplit(key), computed once when it was created.
        activity = this.executeActivity(running, ts === undefined ? keySplit(stim.key) : ts.prefix);
        coarseTime = ts?.state === "memory" ? false : "cancelled";
        break;
      }
      case "ExecuteFailureEvent":
        activity = this.executeActivity(running, keySplit(stim.key));
        coarseTime = "failed";
        break;
      case "RescheduleEvent":
        activity = this.executeActivity(running, keySplit(stim.key));
        coarseTime = "cancelled";
        break;
      default:
        return;
    }
    // The recorded entries, and the rest of the elapsed time under `coarseTime`
    // (or "other" when the outcome was a success), as Dask's DelayedMetricsLedger.
    const entries = running.entries ?? NO_ENTRIES;
    let accounted = 0;
    for (let i = 0; i < entries.length; i += 3) {
      const label = entries[i] as string;
      const value = entries[i + 1] as number;
      const unit = entries[i + 2] as string;
      if (unit === "seconds") {
        accounted += value;
        const shown = coarseTime === false ? label : coarseTime;
        this.digestMetric(names.intern(activity, shown, unit), value);
      } else {
        this.digestMetric(names.intern(activity, label, unit), value);
      }
    }
    const rest = Math.max(0, this.now() - running.start - accounted);
    const shown = coarseTime === false ? "other" : coarseTime;
    this.digestMetric(names.intern(activity, shown, "seconds"), rest);
  }

  /** `("execute", spanId, prefix)`, the activity of a task's run. */
  private executeActivity(running: Running, prefix: string): TrieNode {
    const names = this.metricNames;
    return names.child(names.child(names.child(names.root, "execute"), running.spanId), prefix);
  }

  /**
   * Cancel every asynchronous instruction and wait up to `timeout` seconds for them to
   * end (longer than a Node.js timer waits, about 24.8 days, or `Infinity`: until they
   * end; 0, negative or NaN: not at all). Returns the names of those still running
   * after the timeout.
   */
  async close(timeout = 30): Promise<string[]> {
    this.closeCalled = true;
    const running = this.asyncInstructions.toArray();
    if (running.length === 0) return [];
    this.closeController.abort(new WorkerClosed("worker closed"));
    let timer: ReturnType<typeof setTimeout> | undefined;
    // A longer timer of Node.js (or one of Infinity or NaN) fires after 1 ms.
    const ms = timeout > 0 ? timeout * 1000 : 0;
    const timedOut = new Promise<void>((resolve) => {
      if (ms <= MAX_TIMER_MS) timer = setTimeout(resolve, ms);
    });
    await Promise.race([Promise.allSettled(running.map((r) => r.promise)), timedOut]);
    clearTimeout(timer);
    return this.asyncInstructions.toArray().map((r) => r.name);
  }

  /** True once `close()` was called. */
  get isClosing(): boolean {
    return this.closeCalled;
  }

  /** Send a fire-and-forget message to the scheduler (batched by the shell). */
  abstract batchedSend(msg: Record<string, unknown>): void;

  /** Fetch `toGather` from `worker`; turn every outcome into a GatherDep*Event. */
  abstract gatherDep(
    worker: string,
    toGather: ReadonlySet<string>,
    totalNbytes: number,
    stimulusId: string,
    ctx: AsyncInstructionContext,
  ): Promise<StateMachineEvent>;

  /**
   * Run a task; turn every outcome into an Execute*Event or RescheduleEvent.
   * May return the event itself when the task ended at once.
   */
  abstract execute(
    key: string,
    stimulusId: string,
    ctx: AsyncInstructionContext,
  ): StateMachineEvent | Promise<StateMachineEvent>;

  /** Wait a while, then return a RetryBusyWorkerEvent for `worker`. */
  abstract retryBusyWorkerLater(
    worker: string,
    ctx: AsyncInstructionContext,
  ): Promise<StateMachineEvent>;

  /** Record a numerical metric. */
  abstract digestMetric(name: MetricName, value: number): void;
}
