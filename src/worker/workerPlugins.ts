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
import { Serial } from "../util/serial.ts";
import type { WorkerPlugin } from "./state/dataStore.ts";

/** A worker plugin: each hook optional; `setup` and `teardown` may return promises. */
export interface WorkerPluginHooks<W = unknown> extends WorkerPlugin {
  /** Called once the plugin is added (after the worker registered, for those it finds there). */
  setup?(worker: W): unknown;
  /** Called when the plugin is removed or replaced, and when the worker closes. */
  teardown?(worker: W): unknown;
  /** After every transition of the worker's state machine (errors are logged, not raised). */
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
export class WorkerPlugins<W> {
  /** Adds and removals, one at a time. */
  private readonly serial = new Serial();

  constructor(
    /** The state machine's map. */
    private readonly installed: Map<string, WorkerPlugin>,
    /** What `setup` and `teardown` are given. */
    private readonly worker: W,
  ) {}

  /** The plugins' names, in the order added. */
  get names(): string[] {
    return [...this.installed.keys()];
  }

  /**
   * Add `plugin` as `name`, after tearing down one of that name, and set it
   * up. A plugin whose setup throws is removed again, and the error rethrown.
   */
  add(name: string, plugin: unknown): Promise<void> {
    return this.serial.run(async () => {
      const problem = workerPluginProblem(plugin);
      if (problem !== null)
        throw new TypeError(`worker plugin ${JSON.stringify(name)}: ${problem}`);
      const hooks = plugin as WorkerPluginHooks<W>;
      await this.removeNow(name);
      this.installed.set(name, hooks);
      try {
        await hooks.setup?.(this.worker);
      } catch (err) {
        if (this.installed.get(name) === hooks) this.installed.delete(name);
        throw err;
      }
    });
  }

  /** Remove the plugin `name` and tear it down: false if there is none. Its teardown's error is rethrown. */
  remove(name: string): Promise<boolean> {
    return this.serial.run(() => this.removeNow(name));
  }

  /** Remove and tear down every plugin; `failed` hears of each teardown that throws. */
  removeAll(failed: (name: string, err: unknown) => void): Promise<void> {
    return this.serial.run(async () => {
      for (const name of [...this.installed.keys()]) {
        await this.removeNow(name).catch((err: unknown) => failed(name, err));
      }
    });
  }

  private async removeNow(name: string): Promise<boolean> {
    const plugin = this.installed.get(name) as WorkerPluginHooks<W> | undefined;
    if (plugin === undefined) return false;
    this.installed.delete(name);
    await plugin.teardown?.(this.worker);
    return true;
  }
}
