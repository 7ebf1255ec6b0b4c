/**
 * How a worker hands nanny plugins to its nanny: `weft worker --nanny` runs
 * the worker in a child process with an IPC channel (see
 * src/cli/commands/nanny.ts), over which the worker asks and the nanny
 * answers, one answer per request, matched by id. The nanny has no scheduler
 * connection of its own: the worker is its go-between.
 */

import { type NannyPluginSpec, nannyPluginSpecProblem } from "../protocol/messagesSession.ts";
import { asError } from "../util/asError.ts";
import { timeoutProblem, timeoutUnlessInfinite } from "../util/timers.ts";
import {
  NANNY_REQUEST_TIMEOUT_MS,
  type NannyPluginAdded,
  type NannyPlugins,
} from "./nannyPlugins.ts";

/**
 * How long the worker waits for its nanny's answer (15½ minutes): past the
 * nanny's own bound on a request, its wait behind the others included
 * ({@link NANNY_REQUEST_TIMEOUT_MS}, whose errors say more), by a margin for
 * the channel, so that the nanny has answered, or given up itself, before the
 * worker gives up; for a nanny that cannot answer at all (its event loop
 * blocked by a plugin's hook). A request never answered would keep whoever
 * waits on it (a client's `registerNannyPlugin`, the worker's start) waiting
 * for good.
 */
export const NANNY_ANSWER_TIMEOUT_MS = NANNY_REQUEST_TIMEOUT_MS + 30_000;

/** A worker's way to its nanny (the Worker option `nannyLink`). */
export interface NannyLink {
  /**
   * Have the nanny make and set up the plugin `spec` (the worker at
   * `worker` hands it over), its factory looked for also in `modules` (the
   * task modules clients loaded into the cluster, as the worker imported
   * them); rejects with why it could not. `restart`: the worker is to close,
   * for the nanny to start it again.
   */
  addPlugin(
    spec: NannyPluginSpec,
    worker: string,
    modules?: readonly string[],
  ): Promise<{ readonly restart: boolean }>;
  /** Have the nanny remove and tear down the plugin `name`: whether it had it. */
  removePlugin(name: string): Promise<boolean>;
  /**
   * Tell the nanny that the worker begins to close on its own, and how it is
   * to take the exit: a worker process whose close then never ends (its event
   * loop blocked) is SIGKILLed past a grace, and the nanny goes on as if it
   * had exited so. Optional: a link may not carry it.
   */
  closing?(how: CloseNotice): void;
}

/** How a worker that begins to close is to be taken (see {@link NannyLink.closing}). */
export interface CloseNotice {
  /** It closes to be restarted: the nanny starts another at once. */
  readonly restart: boolean;
  /** It closes on a fault: the nanny starts another, the fault counted. Neither: the nanny ends. */
  readonly fault: boolean;
  /**
   * It closes because its start failed (`weft worker` then exits 2, cannot
   * start): the nanny ends with that code, not as after a retirement (0).
   * Default false.
   */
  readonly startFailed?: boolean;
}

/**
 * What the worker sends its nanny. `sentAt` (`Date.now()` of the worker, on the
 * same host as the nanny): the nanny's bound on the request runs from then, so
 * that a request it heard late (its event loop busy) is not carried out past
 * the worker's own wait.
 */
type NannyRequest =
  | {
      readonly weftNanny: "plugin-add";
      readonly id: number;
      readonly sentAt: number;
      readonly spec: NannyPluginSpec;
      readonly worker: string;
      /** The task modules loaded into the cluster, as the worker imported them. */
      readonly modules?: readonly string[];
    }
  | {
      readonly weftNanny: "plugin-remove";
      readonly id: number;
      readonly sentAt: number;
      readonly name: string;
    };

/** What the worker tells its nanny as it begins to close: no answer. */
interface ClosingNotice extends CloseNotice {
  readonly weftNanny: "closing";
}

/** The nanny's answer to a {@link NannyRequest}: its result, or an `error` text. */
interface NannyAnswer {
  readonly weftNanny: "answer";
  readonly id: number;
  readonly error?: string;
  readonly restart?: boolean;
  readonly removed?: boolean;
}

/** The end of an IPC channel: a child's `process`, or the nanny's `ChildProcess`. */
export interface IpcEnd {
  /** Send `message` to the other end; `callback` hears whether it could. Absent: no channel. */
  send?(message: unknown, callback?: (err: Error | null) => void): boolean;
  /** Hear the other end's messages. */
  on(event: "message", listener: (message: unknown) => void): unknown;
  /** Stop hearing them. */
  off(event: "message", listener: (message: unknown) => void): unknown;
  /** Hear that the channel closed (the other end is gone). */
  once(event: "disconnect", listener: () => void): unknown;
  /** False once the channel closed. */
  readonly connected?: boolean;
}

function isAnswer(m: unknown): m is NannyAnswer {
  return (
    typeof m === "object" &&
    m !== null &&
    (m as { weftNanny?: unknown }).weftNanny === "answer" &&
    typeof (m as { id?: unknown }).id === "number"
  );
}

const GONE = "the nanny is gone (its IPC channel closed)";

/** What a request is, in the error of one not answered in time. */
function requestWhat(request: NannyRequest): string {
  return request.weftNanny === "plugin-add"
    ? `the add of nanny plugin ${JSON.stringify(request.spec.name)}`
    : `the removal of nanny plugin ${JSON.stringify(request.name)}`;
}

/**
 * The worker's end of the link, over `end` (a nanny's child's `process`). Its
 * `message` listener is there only while an answer is awaited: a listener
 * would otherwise hold the channel open, and the process alive. A request
 * not answered within `answerTimeoutMs` fails, saying so; its late answer is
 * dropped.
 */
export function ipcNannyLink(
  end: IpcEnd = process,
  answerTimeoutMs: number = NANNY_ANSWER_TIMEOUT_MS,
): NannyLink {
  const problem = timeoutProblem(answerTimeoutMs);
  if (problem !== null)
    throw new RangeError(`ipcNannyLink: ${problem.replace(/^timeoutMs/, "answerTimeoutMs")}`);
  let nextId = 1;
  const pending = new Map<number, { resolve(a: NannyAnswer): void; reject(e: Error): void }>();
  const onMessage = (m: unknown): void => {
    if (!isAnswer(m)) return;
    const waiter = pending.get(m.id);
    if (waiter === undefined) return;
    pending.delete(m.id);
    if (pending.size === 0) end.off("message", onMessage);
    waiter.resolve(m);
  };
  let gone = false;
  end.once("disconnect", () => {
    gone = true;
    for (const waiter of pending.values()) waiter.reject(new Error(GONE));
    pending.clear();
    end.off("message", onMessage);
  });
  const ask = (request: NannyRequest): Promise<NannyAnswer> =>
    new Promise((resolve, reject) => {
      if (gone || end.connected === false || end.send === undefined) {
        reject(new Error(GONE));
        return;
      }
      if (pending.size === 0) end.on("message", onMessage);
      // Unref'd: a process otherwise done need not stay for an answer.
      const timer = timeoutUnlessInfinite(() => {
        if (!pending.has(request.id)) return;
        pending.delete(request.id);
        if (pending.size === 0) end.off("message", onMessage);
        reject(
          new Error(
            `the nanny did not answer ${requestWhat(request)} within ${answerTimeoutMs / 1000} s (its event loop blocked, or a plugin's hook that never ends?)`,
          ),
        );
      }, answerTimeoutMs);
      timer?.unref();
      pending.set(request.id, {
        resolve: (a) => {
          clearTimeout(timer);
          resolve(a);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      const failed = (err: Error): void => {
        if (!pending.has(request.id)) return;
        pending.delete(request.id);
        clearTimeout(timer);
        if (pending.size === 0) end.off("message", onMessage);
        reject(new Error(`cannot reach the nanny: ${err.message}`));
      };
      try {
        end.send(request, (err) => {
          if (err !== null) failed(err);
        });
      } catch (err) {
        // Thrown at once (e.g. args the JSON channel cannot carry, a BigInt):
        // nothing of the request may stay waiting.
        failed(err as Error);
      }
    }).then((answer) => {
      const a = answer as NannyAnswer;
      if (a.error !== undefined) throw new Error(a.error);
      return a;
    });
  return {
    async addPlugin(spec, worker, modules = []) {
      const a = await ask({
        weftNanny: "plugin-add",
        id: nextId++,
        sentAt: Date.now(),
        spec,
        worker,
        modules,
      });
      return { restart: a.restart === true };
    },
    async removePlugin(name) {
      const a = await ask({ weftNanny: "plugin-remove", id: nextId++, sentAt: Date.now(), name });
      return a.removed === true;
    },
    closing(how) {
      if (gone || end.connected === false || end.send === undefined) return;
      const notice: ClosingNotice = {
        weftNanny: "closing",
        restart: how.restart,
        fault: how.fault,
        startFailed: how.startFailed === true,
      };
      try {
        // A nanny gone meanwhile has nothing to take: the failure is no news.
        end.send(notice, () => {});
      } catch {}
    },
  };
}

/** What the nanny's end of the link reports, besides answering. */
export interface NannyLinkEvents {
  /** The worker said its address (with each plugin it hands over). */
  worker(address: string): void;
  /** A plugin was set up: whether the worker restarts for it. */
  added(name: string, restart: boolean): void;
  /** A plugin was removed (if the nanny had it). */
  removed(name: string, had: boolean): void;
  /** A request failed: the worker is told `why` too. */
  failed(name: string, why: string): void;
  /** The worker begins to close on its own, to be taken as `how` says. */
  closing?(how: CloseNotice): void;
}

/**
 * The nanny's end of the link to its child `child`: each request is carried
 * out with `plugins` and answered. Returns a function that stops listening.
 */
export function serveNannyLink(
  child: IpcEnd,
  plugins: Pick<NannyPlugins, "add" | "remove">,
  events: NannyLinkEvents,
): () => void {
  const answer = (a: NannyAnswer): void => {
    if (child.connected === false) return; // the child is gone: no one to tell
    child.send?.(a, () => {}); // a send failing means the same
  };
  const onMessage = (m: unknown): void => {
    const notice = m as Partial<ClosingNotice> | null;
    if (typeof notice === "object" && notice !== null && notice.weftNanny === "closing") {
      events.closing?.({
        restart: notice.restart === true,
        fault: notice.fault === true,
        startFailed: notice.startFailed === true,
      });
      return;
    }
    const request = m as Partial<NannyRequest> | null;
    if (typeof request !== "object" || request === null || typeof request.id !== "number") return;
    const id = request.id;
    // Not later than now: a worker's clock is the nanny's (the same host), but a
    // request without a time, or with one to come, is taken as asked now.
    const now = Date.now();
    const askedAt =
      typeof request.sentAt === "number" && Number.isFinite(request.sentAt)
        ? Math.min(request.sentAt, now)
        : now;
    if (request.weftNanny === "plugin-add") {
      const problem = nannyPluginSpecProblem(request.spec);
      if (problem !== null) {
        answer({ weftNanny: "answer", id, error: problem });
        return;
      }
      const spec = request.spec as NannyPluginSpec;
      if (typeof request.worker === "string") events.worker(request.worker);
      const modules = Array.isArray(request.modules)
        ? request.modules.filter((m): m is string => typeof m === "string")
        : [];
      void plugins.add(spec, modules, askedAt).then(
        (done: NannyPluginAdded) => {
          if (done.setUp) events.added(spec.name, done.restart);
          answer({ weftNanny: "answer", id, restart: done.restart });
        },
        (err: unknown) => {
          const why = asError(err).message;
          events.failed(spec.name, why);
          answer({ weftNanny: "answer", id, error: why });
        },
      );
    } else if (request.weftNanny === "plugin-remove" && typeof request.name === "string") {
      const { name } = request;
      void plugins.remove(name, askedAt).then(
        (had) => {
          events.removed(name, had);
          answer({ weftNanny: "answer", id, removed: had });
        },
        (err: unknown) => {
          const why = `teardown: ${asError(err).message}`;
          events.failed(name, why);
          answer({ weftNanny: "answer", id, error: why });
        },
      );
    }
  };
  child.on("message", onMessage);
  return () => child.off("message", onMessage);
}
