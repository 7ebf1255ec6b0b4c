/**
 * Scheduler plugins (Dask's `SchedulerPlugin`): objects a program running the
 * scheduler adds (`Scheduler.addPlugin`, the `plugins` option, or a preload
 * module's `weftSetup(scheduler)`), told of what happens on the scheduler.
 *
 * ```ts
 * // preload.ts: weft scheduler --preload ./preload.ts
 * // (Scheduler and SchedulerPlugin are types of the package's weft/scheduler entry)
 * export async function weftSetup(scheduler: Scheduler) {
 *   let erred = 0;
 *   const plugin: SchedulerPlugin = {
 *     name: "erred-counter",
 *     transition: (key, start, finish) => { if (finish === "erred") erred++; },
 *     removeWorker: (_s, worker) => console.log(`lost ${worker}`),
 *     close: () => console.log(`${erred} tasks erred`),
 *   };
 *   await scheduler.addPlugin(plugin);
 * }
 * ```
 *
 * Every hook is optional. Those of the state machine and the sessions are called
 * synchronously, and an error they throw, or the rejection of a promise they
 * return (not awaited), is logged (the scheduler goes on); `start` and `close`
 * may return promises, which are awaited.
 */

import type { Logger } from "pino";
import { openedValue } from "../comm/openedValue.ts";
import { asError } from "../util/asError.ts";
import {
  CloseBudget,
  closeEachWithin,
  DEFAULT_CLOSE_TIMEOUT_S,
  type Unfinished,
} from "../util/closeBudget.ts";
import { callGuarded } from "../util/guardedCall.ts";
import { hooksProblem } from "../util/hooksProblem.ts";
import { ReentrantSerial } from "../util/reentrantSerial.ts";
import type { Scheduler } from "./scheduler.ts";
import type { GraphUpdate, SchedulerTransitionPlugin } from "./state/schedulerState.ts";

export type { GraphUpdate } from "./state/schedulerState.ts";

/** A scheduler plugin: each hook optional. */
export interface SchedulerPlugin extends SchedulerTransitionPlugin {
  /** Its name (default: `addPlugin`'s, else its class's). One of the same name is replaced. */
  readonly name?: string;
  /** Called (and awaited) when it is added: at once, or as the scheduler starts. */
  start?(scheduler: Scheduler): unknown;
  /** Called (and awaited) when it is removed or replaced, and when the scheduler closes. */
  close?(): unknown;
  /** A worker registered. */
  addWorker?(scheduler: Scheduler, worker: string): void;
  /** A worker left or was removed, or is still connected as the scheduler closes (before `close`). */
  removeWorker?(scheduler: Scheduler, worker: string): void;
  /** A client connected. */
  addClient?(scheduler: Scheduler, client: string): void;
  /** A client left, or is still connected as the scheduler closes (before `close`). */
  removeClient?(scheduler: Scheduler, client: string): void;
  /** An event was logged under `topic` (`Client.logEvent`, and the scheduler's own). */
  logEvent?(topic: string, msg: unknown): void;
  /**
   * A client submitted tasks (Dask's `update_graph`): told once the scheduler
   * has made the new ones, before their transitions (not of a graph it refused).
   */
  updateGraph?(scheduler: Scheduler, update: GraphUpdate): void;
  /**
   * The scheduler begins to close (Dask's `before_close`): still listening,
   * its workers and clients still connected. Not awaited.
   */
  beforeClose?(): void;
  /** A client restarted the cluster (Dask's `restart`): its tasks and results are dropped, its workers told to close. */
  restart?(scheduler: Scheduler): void;
}

/** The session hooks, called with the scheduler and an address or client id. */
export type SessionHook = "addWorker" | "removeWorker" | "addClient" | "removeClient";

const HOOKS = [
  "start",
  "close",
  "transition",
  "addWorker",
  "removeWorker",
  "addClient",
  "removeClient",
  "logEvent",
  "updateGraph",
  "restart",
  "beforeClose",
] as const;

/** Why `v` is not a scheduler plugin, or null. */
export function schedulerPluginProblem(v: unknown): string | null {
  return hooksProblem(v, HOOKS, `an object with hook methods (${HOOKS.join(", ")})`);
}

/** The name a plugin is kept under. */
function pluginName(plugin: SchedulerPlugin, given: string | undefined): string {
  const name = given ?? plugin.name ?? plugin.constructor?.name;
  if (typeof name === "string" && name !== "" && name !== "Object") return name;
  throw new TypeError(
    "addPlugin: a scheduler plugin needs a name (its name field, addPlugin's name, or a class of its own)",
  );
}

/** The plugins of one scheduler, kept in its state machine's `plugins` map too (for `transition`). */
export class SchedulerPlugins {
  private readonly installed = new Map<string, SchedulerPlugin>();
  /**
   * Adds and removals, one at a time; a plugin's `start` or `close` adding or
   * removing one (and awaiting it) has it done at once, not queued behind itself.
   */
  private readonly serial = new ReentrantSerial();

  /** The state machine's map, which calls the `transition` hooks. */
  private readonly stateMap: Map<string, SchedulerTransitionPlugin>;
  /**
   * Plugins whose `start` runs: kept (a close closes them), but told of
   * nothing yet, as Dask's `register_scheduler_plugin` adds a plugin once its
   * `start` is over; the state machine's map has them only then.
   */
  private readonly starting = new Set<SchedulerPlugin>();
  /** Set by {@link closeAll}: adds are refused from then on. */
  private closed = false;
  /** The plugin whose `start` or `close` runs now, if any (what a close may be waiting on). */
  private busy: Unfinished<"start" | "close"> | null = null;
  /** Set by {@link inProgressStalled}: a close does not wait on the add or removal in progress. */
  private stalled = false;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly logger: Logger,
  ) {
    this.stateMap = scheduler.state.plugins;
    scheduler.state.onPluginError = (name, err) =>
      logger.error({ err, plugin: name }, "scheduler plugin failed in transition");
    scheduler.state.onGraphUpdate = (update) =>
      this.call("updateGraph", (plugin) => plugin.updateGraph?.(scheduler, update));
    scheduler.state.onRestart = () => this.call("restart", (plugin) => plugin.restart?.(scheduler));
  }

  /** The plugins' names, in the order added. */
  get names(): string[] {
    return [...this.installed.keys()];
  }

  /**
   * Add `plugin` under `name` (default: its own), after closing one of that name,
   * and start it. One whose start throws is removed again, and the error rethrown.
   */
  add(plugin: SchedulerPlugin, name?: string): Promise<string> {
    return this.serial.run(async () => {
      const problem = schedulerPluginProblem(plugin);
      if (problem !== null) throw new TypeError(`addPlugin: ${problem}`);
      const key = pluginName(plugin, name);
      // An add on its way as the scheduler closed (its factory awaited) would be
      // started on the closed scheduler and never closed.
      if (this.closed) throw new Error(`addPlugin: ${key} not started: the scheduler is closing`);
      await this.removeNow(key);
      // Kept now, for a close meanwhile to close it; told of nothing until started.
      this.installed.set(key, plugin);
      this.starting.add(plugin);
      // Within a hook's own add or removal, the one in progress is busy again after.
      const outer = this.busy;
      this.busy = { name: key, step: "start" };
      try {
        await plugin.start?.(this.scheduler);
      } catch (err) {
        if (this.installed.get(key) === plugin) this.installed.delete(key);
        throw err;
      } finally {
        this.starting.delete(plugin);
        this.busy = outer;
      }
      // Not if a close or its own start removed it meanwhile.
      if (this.installed.get(key) === plugin) this.stateMap.set(key, plugin);
      return key;
    });
  }

  /** Remove the plugin `name` and close it: false if there is none. Its close's error is rethrown. */
  remove(name: string): Promise<boolean> {
    return this.serial.run(() => this.removeNow(name));
  }

  /**
   * The add or removal in progress waits on nothing left to run (the
   * scheduler's start, waiting on it, stalled: see `StartWatch`): it can
   * never end, and {@link closeAll} closes its plugin without waiting for it.
   * Waited on, it held the close for its whole timeout, and the closes of the
   * plugins started before it were then not waited on at all.
   */
  inProgressStalled(): void {
    this.stalled = true;
  }

  /**
   * Close every plugin, for good (the scheduler closes; later adds are refused):
   * errors are logged. The add or removal in progress (unless it stalled: see
   * {@link inProgressStalled}), then the closes, one at a
   * time in the order added, are waited on until `budget`'s deadline at most
   * (default {@link DEFAULT_CLOSE_TIMEOUT_S}): the plugin whose `start` or
   * `close` still runs then, and each later `close` that does not end at once
   * (they are still called, in order), is logged at warn, and no longer waited on.
   */
  async closeAll(budget = new CloseBudget(DEFAULT_CLOSE_TIMEOUT_S)): Promise<void> {
    this.closed = true;
    await closeEachWithin<string, "start" | "close">({
      budget,
      // Not a job of the queue: a start or close that never ends would hold it for
      // good. A plugin still starting is closed all the same.
      ...(this.stalled
        ? {}
        : { inProgress: { settled: this.serial.run(async () => {}), busy: () => this.busy } }),
      items: () => [...this.installed.keys()],
      nameOf: (name) => name,
      close: (name) => this.removeNow(name),
      closeStep: "close",
      failed: (name, err) =>
        this.logger.error({ err: asError(err), plugin: name }, "scheduler plugin failed to close"),
      unfinished: (name, hook) =>
        this.logger.warn(
          { plugin: name },
          `scheduler plugin ${hook} did not finish within the close's timeout (${budget.seconds} s): no longer waited on`,
        ),
    });
    budget.clear();
  }

  /** Call `hook` of every plugin that has it. */
  notify(hook: SessionHook, subject: string): void {
    this.call(hook, (plugin) => plugin[hook]?.(this.scheduler, subject));
  }

  /** The scheduler begins to close: `beforeClose` of every plugin that has it. */
  beforeClose(): void {
    this.call("beforeClose", (plugin) => plugin.beforeClose?.());
  }

  /**
   * Call `hook` of every plugin that has it, through `call`: what it throws or
   * rejects with is logged (a rejection dropped was an unhandled rejection).
   */
  private call(hook: keyof SchedulerPlugin, call: (plugin: SchedulerPlugin) => unknown): void {
    for (const [name, plugin] of this.installed) {
      if (typeof plugin[hook] !== "function" || this.starting.has(plugin)) continue;
      callGuarded(
        () => call(plugin),
        (err) =>
          this.logger.error({ err: asError(err), plugin: name, hook }, "scheduler plugin failed"),
      );
    }
  }

  /** Call `logEvent` of every plugin that has it, once per topic, with a client's message as the client gave it. */
  logEvent(topics: readonly string[], logged: unknown): void {
    if (this.installed.size === 0) return;
    // Read by the plugins: a typed array forwarded unread would be an empty object.
    const msg = openedValue(logged);
    for (const [name, plugin] of this.installed) {
      if (typeof plugin.logEvent !== "function" || this.starting.has(plugin)) continue;
      for (const topic of topics) {
        callGuarded(
          () => plugin.logEvent?.(topic, msg),
          (err) =>
            this.logger.error(
              { err: asError(err), plugin: name, hook: "logEvent" },
              "scheduler plugin failed",
            ),
        );
      }
    }
  }

  private async removeNow(name: string): Promise<boolean> {
    const plugin = this.installed.get(name);
    if (plugin === undefined) return false;
    this.installed.delete(name);
    this.stateMap.delete(name);
    const outer = this.busy;
    this.busy = { name, step: "close" };
    try {
      await plugin.close?.();
    } finally {
      this.busy = outer;
    }
    return true;
  }
}
