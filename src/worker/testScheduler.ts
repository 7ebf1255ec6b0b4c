/**
 * A fake scheduler for worker tests: accepts `register-worker`, records every
 * message the workers send, and lets the test send them anything.
 */

import type { Comm, Listener } from "../comm/comm.ts";
import { listen } from "../comm/connect.ts";
import { forEachMessage } from "../comm/forEachMessage.ts";
import type { TaskSpec } from "../protocol/messagesTaskSpec.ts";
import { wireVersion } from "../protocol/version.ts";

/** A message a worker sent, and which worker. */
export interface Received {
  readonly worker: string;
  readonly msg: Record<string, unknown>;
}

/** Options of {@link FakeScheduler.start}. */
export interface FakeSchedulerOptions {
  /** Where to listen. Default `inproc://sched`. */
  address?: string;
  /** Refuse registrations with this message. */
  refuse?: string;
  /**
   * Reply with these fields in place of this weft's versions (`{}`: a
   * scheduler older than the version check). Workers of any version are accepted.
   */
  replyVersion?: Record<string, unknown>;
  /** The task modules the reply tells workers to import (`taskModules`). */
  taskModules?: readonly string[];
  /** Answer each registration this many ms late, as a scheduler frozen meanwhile (SIGSTOP). */
  answerAfterMs?: number;
}

/** Stands in for the scheduler. */
export class FakeScheduler {
  /** Every message received (register-worker included), in order. */
  readonly received: Received[] = [];
  private readonly comms = new Map<string, Comm>();
  private readonly waiters = new Set<(r: Received) => void>();
  private runId = 0;

  private constructor(
    private readonly listener: Listener,
    private readonly options: FakeSchedulerOptions,
  ) {}

  /** Listen and serve. */
  static async start(options: FakeSchedulerOptions = {}): Promise<FakeScheduler> {
    let self: FakeScheduler | null = null;
    const pending: Comm[] = [];
    const listener = await listen(options.address ?? "inproc://sched", (comm) => {
      if (self === null) pending.push(comm);
      else void self.serve(comm);
    });
    self = new FakeScheduler(listener, options);
    for (const c of pending) void self.serve(c);
    return self;
  }

  /** The address workers connect to. */
  get address(): string {
    return this.listener.address;
  }

  private record(worker: string, msg: unknown): void {
    const r: Received = { worker, msg: msg as Record<string, unknown> };
    this.received.push(r);
    for (const w of [...this.waiters]) w(r);
  }

  private async serve(comm: Comm): Promise<void> {
    const first = (await comm.recv().catch(() => null)) as Record<string, unknown> | null;
    if (first === null || first.op !== "register-worker" || typeof first.address !== "string") {
      comm.abort();
      return;
    }
    const worker = first.address;
    this.record(worker, first);
    if (this.options.answerAfterMs !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, this.options.answerAfterMs));
      // The worker gave up waiting (its deathTimeoutMs) and closed the connection:
      // an answer now would be an unhandled rejection, after its test.
      if (comm.isClosed) return;
    }
    const version = this.options.replyVersion ?? wireVersion();
    if (this.options.refuse !== undefined) {
      await comm.send({
        op: "register-worker-reply",
        status: "error",
        message: this.options.refuse,
        ...version,
      });
      await comm.close();
      return;
    }
    this.comms.set(worker, comm);
    await comm.send({
      op: "register-worker-reply",
      status: "OK",
      ...(this.options.taskModules !== undefined ? { taskModules: this.options.taskModules } : {}),
      ...version,
    });
    try {
      await forEachMessage(comm, (frame) => {
        for (const msg of Array.isArray(frame) ? frame : [frame]) this.record(worker, msg);
      });
    } catch {
      // the worker went away
    }
    this.comms.delete(worker);
    this.record(worker, { op: "disconnected" });
  }

  /** Send messages (as one batch) to a worker. */
  async send(worker: string, ...msgs: unknown[]): Promise<void> {
    await this.sendBatch(worker, msgs);
  }

  /** Send `msgs` in one batch (any number: not spread). */
  async sendBatch(worker: string, msgs: unknown[]): Promise<void> {
    const comm = this.comms.get(worker);
    if (comm === undefined) throw new Error(`no worker ${worker} connected`);
    await comm.send(msgs);
  }

  /** Send `frame` as it is: a batch (an array of messages), or a lone message. */
  async sendFrame(worker: string, frame: unknown): Promise<void> {
    const comm = this.comms.get(worker);
    if (comm === undefined) throw new Error(`no worker ${worker} connected`);
    await comm.send(frame);
  }

  /** Send `compute-task` for `key` running `spec`, with the dependencies' locations. */
  async computeTask(
    worker: string,
    key: string,
    spec: TaskSpec | null,
    o: {
      whoHas?: Record<string, string[]>;
      nbytes?: Record<string, number>;
      priority?: number[];
      resources?: Record<string, number>;
    } = {},
  ): Promise<number> {
    const runId = ++this.runId;
    const whoHas = o.whoHas ?? {};
    await this.send(worker, {
      op: "compute-task",
      key,
      runId,
      whoHas,
      nbytes: o.nbytes ?? Object.fromEntries(Object.keys(whoHas).map((k) => [k, 8])),
      priority: o.priority ?? [0, runId],
      duration: 0.1,
      runSpec: spec,
      resourceRestrictions: o.resources ?? {},
      actor: false,
      annotations: {},
      spanId: null,
      stimulusId: `compute-task-${key}-${runId}`,
    });
    return runId;
  }

  /** Messages received so far that match. */
  messages(
    pred: (msg: Record<string, unknown>, worker: string) => boolean = () => true,
  ): Record<string, unknown>[] {
    return this.received.filter((r) => pred(r.msg, r.worker)).map((r) => r.msg);
  }

  /** The first message (already received or coming) that matches. */
  waitFor(
    pred: (msg: Record<string, unknown>, worker: string) => boolean,
    timeoutMs = 10_000,
  ): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const hit = this.received.find((r) => pred(r.msg, r.worker));
      if (hit !== undefined) {
        resolve(hit.msg);
        return;
      }
      const check = (r: Received): void => {
        if (!pred(r.msg, r.worker)) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(r.msg);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        const ops = this.received.map((r) => r.msg.op).join(", ");
        reject(
          new Error(`FakeScheduler: no matching message within ${timeoutMs} ms (received: ${ops})`),
        );
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  /** The `op` message about `key` (task-finished, task-erred, …). */
  waitForKey(op: string, key: string, timeoutMs?: number): Promise<Record<string, unknown>> {
    return this.waitFor((m) => m.op === op && m.key === key, timeoutMs);
  }

  /** Stop listening and drop every worker connection. */
  async close(): Promise<void> {
    await this.listener.close();
    for (const c of this.comms.values()) c.abort();
  }
}
