/**
 * Code of the clients' choosing, run in the scheduler's process: Dask's
 * `Client.run_on_scheduler` and `Client.register_scheduler_plugin`. As on the
 * workers, code is named, not shipped: a task function (`defineTask`) of a
 * module the scheduler imports, from its own `taskModules` option (`weft
 * scheduler --tasks`) or the cluster's (`Client.loadTaskModules`), imported
 * the first time a function is asked for that no module imported so far
 * defines. While it runs, {@link currentScheduler} gives the scheduler (Dask
 * passes it as the `dask_scheduler` argument).
 *
 * ```ts
 * // tasks.ts, which the scheduler imports too
 * export const busiest = defineTask("busiest", () => {
 *   const s = currentScheduler(); // from "weft/scheduler"
 *   return [...s.state.workers.values()].sort((a, b) => b.processing.size - a.processing.size)[0]?.address;
 * });
 * // the client
 * const address = await client.runOnScheduler(busiest);
 * ```
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { asError } from "../util/asError.ts";
import { type SerializedError, serializeError } from "../worker/executor.ts";
import { importTaskModule } from "../worker/importTaskModule.ts";
import { frameLocations, withoutRunnerFrames } from "../worker/taskFrames.ts";
import {
  getTaskFunction,
  type TaskFunction,
  taskFunctionNames,
  UnknownTaskFunctionError,
} from "../worker/taskRegistry.ts";
import type { Scheduler } from "./scheduler.ts";

/**
 * One per process, kept on `globalThis` as the task registry is: a task module
 * may import another copy of weft than the scheduler runs (its build and its
 * sources, or a copy in the module's own `node_modules`), and must still find
 * the scheduler.
 */
const RUNNING_KEY = Symbol.for("weft.currentScheduler");
const running: AsyncLocalStorage<Scheduler> = ((globalThis as Record<symbol, unknown>)[
  RUNNING_KEY
] ??= new AsyncLocalStorage<Scheduler>()) as AsyncLocalStorage<Scheduler>;

/** Where the frames that call the functions clients run here are: this module's. */
const CALLER_FRAMES = frameLocations([import.meta.url]);

/**
 * The scheduler running the code that calls this: a function run by
 * `Client.runOnScheduler`, or a scheduler plugin's factory
 * (`Client.registerSchedulerPlugin`), and whatever they call or await.
 * Throws anywhere else.
 */
export function currentScheduler(): Scheduler {
  const s = running.getStore();
  if (s === undefined) {
    throw new Error(
      "currentScheduler: not called from code the scheduler runs (Client.runOnScheduler, Client.registerSchedulerPlugin)",
    );
  }
  return s;
}

/** What a run gives back: its value, or the error it threw (as a task's). */
export type SchedulerRunOutcome =
  | { readonly status: "OK"; readonly value: unknown }
  | { readonly status: "error"; readonly error: SerializedError };

/** The scheduler's task functions, and the runs of them clients ask for. */
export class SchedulerCode {
  /** The modules imported: not imported again. */
  private readonly imported = new Set<string>();

  constructor(
    private readonly scheduler: Scheduler,
    /** The module URLs to look in, in order: the scheduler's own, then the cluster's. */
    private readonly modules: () => readonly string[],
  ) {}

  /**
   * The task function `name`: registered already in this process, else once
   * the modules not imported yet are (a module that fails to import is tried
   * again next time, which imports one whose file was missing, or that imports
   * one that was, or that threw or did not parse and was fixed since:
   * `importModule` asks under another URL; what a failed one defined is
   * unregistered, `importTaskModule`). Throws an {@link UnknownTaskFunctionError} naming the
   * modules that failed, and why.
   */
  async lookup(name: string): Promise<TaskFunction> {
    const failed: string[] = [];
    for (const url of this.modules()) {
      if (getTaskFunction(name) !== undefined) break;
      if (this.imported.has(url)) continue;
      try {
        await importTaskModule(url);
        this.imported.add(url);
      } catch (err) {
        failed.push(`${url} (${asError(err).message})`);
      }
    }
    const fn = getTaskFunction(name);
    if (fn !== undefined) return fn;
    const known = taskFunctionNames();
    const shown = known.length > 20 ? `${known.slice(0, 20).join(", ")}, …` : known.join(", ");
    throw new UnknownTaskFunctionError(
      `unknown task function ${JSON.stringify(name)}: no task module the scheduler imported defines it` +
        (known.length > 0 ? ` (defined: ${shown})` : " (no task functions are defined)") +
        (failed.length > 0 ? `; could not import ${failed.join(", ")}` : "") +
        " (give the scheduler its task modules: weft scheduler --tasks, the Scheduler option taskModules, or Client.loadTaskModules)",
    );
  }

  /** Call `fn(...args)` with {@link currentScheduler} set, awaiting what it returns. */
  async call(fn: TaskFunction, args: readonly unknown[]): Promise<unknown> {
    return await running.run(this.scheduler, () =>
      (fn as (...a: readonly unknown[]) => unknown)(...args),
    );
  }

  /** Run the task function `name` on `args`: its value, or what it (or the lookup) threw. */
  async run(name: string, args: readonly unknown[]): Promise<SchedulerRunOutcome> {
    try {
      const fn = await this.lookup(name);
      return { status: "OK", value: await this.call(fn, args) };
    } catch (err) {
      const error = serializeError(err);
      // The function's frames, as a task's traceback: those calling it (this
      // module's, the scheduler's request handling, Node's) are the same for
      // every call; an error of the lookup has none of the function's.
      return {
        status: "error",
        error: {
          ...error,
          stack: withoutRunnerFrames(error.stack, CALLER_FRAMES),
          tracebackText: withoutRunnerFrames(error.tracebackText, CALLER_FRAMES),
        },
      };
    }
  }

  /**
   * Make a scheduler plugin with the task function `fn` on `args` and add it
   * under `name` (replacing one of that name): the plugins' names. Throws if
   * the function is unknown or throws, if what it gives is no plugin, or if
   * the plugin's `start` throws (then it is not kept).
   */
  async addPlugin(name: string, fn: string, args: readonly unknown[]): Promise<string[]> {
    const factory = await this.lookup(fn);
    const plugin = await this.call(factory, args);
    await this.scheduler.addPlugin(plugin as Parameters<Scheduler["addPlugin"]>[0], name);
    return this.scheduler.plugins.names;
  }
}
