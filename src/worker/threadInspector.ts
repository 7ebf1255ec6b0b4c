/**
 * The inspector sessions of this process's worker threads, reached from the
 * main thread through the `NodeWorker` domain (as Chrome DevTools reaches
 * them). One per process, made on first use and kept: attaching to a thread
 * waits for the thread's event loop, but a message to a session attached
 * already is handled by interrupting the thread, even deep in synchronous
 * code. So only the first use finds busy threads late.
 */

import type { NodeWorker } from "node:inspector";
import { Session } from "node:inspector/promises";
import { warnCallbackFailed } from "../util/callbackWarning.ts";
import { callGuarded } from "../util/guardedCall.ts";

/** An inspector message's answer. */
interface Answer {
  readonly result?: unknown;
  readonly error?: { readonly message: string };
}

/** A thread whose inspector session is open. */
interface AttachedThread {
  readonly sessionId: string;
  readonly threadId: number;
}

/** The process's worker threads under the inspector. */
export class ThreadInspector {
  private readonly session = new Session();
  private readonly byThread = new Map<number, AttachedThread>();
  private readonly answers = new Map<number, (a: Answer) => void>();
  private readonly attachListeners = new Set<(threadId: number) => void>();
  private nextId = 1;
  private enabled: Promise<void> | null = null;

  /** Attach to every worker thread of the process, present and to come (once). */
  enable(): Promise<void> {
    this.enabled ??= this.start();
    return this.enabled;
  }

  private async start(): Promise<void> {
    const s = this.session;
    s.connect();
    // The threads' messages reach this session by interrupting the main thread
    // wherever its JavaScript is, Node's own timer lists half-updated included:
    // a handler touching timers there corrupts them (and a test's timeout then
    // never fires). So each handler only queues its work for a clean point.
    const later =
      <M>(handle: (m: M) => void) =>
      (m: M): void =>
        queueMicrotask(() => handle(m));
    s.on(
      "NodeWorker.attachedToWorker",
      later((m: { params: NodeWorker.AttachedToWorkerEventDataType }) => {
        // `workerId` counts the inspector's attachments: the thread id is in the title.
        const match = /^\[worker (\d+)\]/.exec(m.params.workerInfo.title);
        if (match === null) return;
        const threadId = Number(match[1]);
        this.byThread.set(threadId, { sessionId: m.params.sessionId, threadId });
        // A listener's throw here was an uncaught exception, and the others went unheard.
        for (const listener of this.attachListeners) {
          callGuarded(
            () => listener(threadId),
            (err) => warnCallbackFailed("ThreadInspector onAttach listener failed", err),
          );
        }
      }),
    );
    s.on(
      "NodeWorker.detachedFromWorker",
      later((m: { params: NodeWorker.DetachedFromWorkerEventDataType }) => {
        for (const [threadId, t] of this.byThread) {
          if (t.sessionId === m.params.sessionId) this.byThread.delete(threadId);
        }
      }),
    );
    s.on(
      "NodeWorker.receivedMessageFromWorker",
      later((m: { params: NodeWorker.ReceivedMessageFromWorkerEventDataType }) => {
        let msg: { id?: unknown } & Answer;
        try {
          msg = JSON.parse(m.params.message) as typeof msg;
        } catch {
          return;
        }
        if (typeof msg.id !== "number") return;
        const answer = this.answers.get(msg.id);
        if (answer === undefined) return;
        this.answers.delete(msg.id);
        answer(msg);
      }),
    );
    await s.post("NodeWorker.enable", { waitForDebuggerOnStart: false });
  }

  /** Whether thread `threadId` is attached (its session open). */
  isAttached(threadId: number): boolean {
    return this.byThread.has(threadId);
  }

  /**
   * Call `listener` with each thread attached from now on; returns what
   * removes it. What it throws, or a rejection of the promise it returns, is a
   * process warning (`process.emitWarning`).
   */
  onAttach(listener: (threadId: number) => void): () => void {
    this.attachListeners.add(listener);
    return () => this.attachListeners.delete(listener);
  }

  /**
   * `method(params)` in thread `threadId`'s inspector: its result. Rejects if
   * the thread is not attached, ends, or does not answer within `timeoutMs`.
   */
  send(threadId: number, method: string, params: object, timeoutMs: number): Promise<unknown> {
    const t = this.byThread.get(threadId);
    if (t === undefined) return Promise.reject(new Error(`thread ${threadId} is not attached`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.answers.delete(id);
        reject(new Error(`thread ${threadId} did not answer ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      // Not unref'd: an inspector answer on its way holds no handle of the event
      // loop, which could otherwise end the process while waiting for it.
      this.answers.set(id, (a) => {
        clearTimeout(timer);
        if (a.error !== undefined) reject(new Error(`${method}: ${a.error.message}`));
        else resolve(a.result);
      });
      this.session
        .post("NodeWorker.sendMessageToWorker", {
          sessionId: t.sessionId,
          message: JSON.stringify({ id, method, params }),
        })
        .catch((err: unknown) => {
          clearTimeout(timer);
          this.answers.delete(id);
          reject(err);
        });
    });
  }
}

let instance: ThreadInspector | null = null;

/** The process's {@link ThreadInspector}. */
export function threadInspector(): ThreadInspector {
  instance ??= new ThreadInspector();
  return instance;
}
