/**
 * The worker plugins a worker runs (Dask's `WorkerPlugin`): objects a task
 * function makes on the worker's main thread, set up as they are added, whose
 * `transition` hook the state machine calls after every transition, torn down
 * as they are removed or the worker closes.
 *
 * ```ts
 * // tasks.ts
 * export const countErrors = defineTask("countErrors", (label: string) => {
 *   let errors = 0;
 *   return {
 *     setup(worker: Worker) { console.log(`${label} on ${worker.address}`); },
 *     transition(key: string, start: string, finish: string) { if (finish === "error") errors++; },
 *     teardown() { console.log(`${label}: ${errors} errors`); },
 *   };
 * });
 * // a client
 * await client.registerWorkerPlugin(countErrors, { args: ["prod"] });
 * ```
 */

import { hooksProblem } from "../util/hooksProblem.ts";
import { PluginRegistry } from "./pluginRegistry.ts";
import type { WorkerPlugin } from "./state/dataStore.ts";

/** A worker plugin: each hook optional; `setup` and `teardown` may return promises. */
export interface WorkerPluginHooks<W = unknown> extends WorkerPlugin {
  /** Called once the plugin is added (after the worker registered, for those it finds there). */
  setup?(worker: W): unknown;
  /** Called when the plugin is removed or replaced, and when the worker closes. */
  teardown?(worker: W): unknown;
  /**
   * After every transition of the worker's state machine (errors, and the
   * rejection of a promise it returns, which is not awaited, are logged, not raised).
   */
  transition?(key: string, start: string, finish: string): void;
}

const HOOKS = ["setup", "teardown", "transition"] as const;

/** Why `v` is not a worker plugin, or null. */
export function workerPluginProblem(v: unknown): string | null {
  const problem = hooksProblem(v, HOOKS, "an object with setup, teardown or transition methods");
  if (problem !== null) return problem;
  const hooks = v as Record<string, unknown>;
  if (HOOKS.every((hook) => hooks[hook] === undefined)) {
    return "it has none of the methods setup, teardown and transition";
  }
  return null;
}

/**
 * The plugins of one worker, kept in its state machine's `plugins` map (which
 * calls their `transition` hooks). Adds and removals run one at a time, in the
 * order asked.
 */
export class WorkerPlugins<W> extends PluginRegistry<WorkerPlugin> {
  constructor(
    /** The state machine's map. */
    installed: Map<string, WorkerPlugin>,
    /** What `setup` and `teardown` are given. */
    private readonly worker: W,
    /** Told of the teardown that throws of a plugin being replaced (the new one is set up all the same). */
    replacedTeardownFailed: (name: string, err: unknown) => void,
  ) {
    super(installed, replacedTeardownFailed);
  }

  /**
   * Add `plugin` as `name`, after tearing down one of that name, and set it
   * up. A plugin whose setup throws is removed again, and the error rethrown.
   */
  add(name: string, plugin: unknown): Promise<void> {
    return this.inTurn(async () => {
      const problem = workerPluginProblem(plugin);
      if (problem !== null)
        throw new TypeError(`worker plugin ${JSON.stringify(name)}: ${problem}`);
      const hooks = plugin as WorkerPluginHooks<W>;
      await this.install(name, hooks, () => hooks.setup?.(this.worker));
    });
  }

  protected teardown(plugin: WorkerPlugin): unknown {
    return (plugin as WorkerPluginHooks<W>).teardown?.(this.worker);
  }
}
