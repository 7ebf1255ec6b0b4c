/**
 * `Client.registerNannyPlugin` and `unregisterNannyPlugin` (Dask's
 * `register_worker_plugin(..., nanny=True)`, `unregister_worker_plugin(...,
 * nanny=True)`): each worker with a nanny (`weft worker --nanny`) hands the
 * plugin to its nanny, which makes it in its own process and sets it up; once
 * all could, the scheduler records it, so that every worker with a nanny
 * registering from then on hands it over too (see src/worker/nannyPlugins.ts).
 */

import type { NannyPluginSpec } from "../protocol/messagesSession.ts";
import { builtInArgsProblem } from "../worker/environ.ts";
import type { TaskDefinition, TaskFunction } from "../worker/taskRegistry.ts";
import { checkOptionalBoolean } from "./argChecks.ts";
import { NannyPluginError } from "./errors.ts";
import { NANNY_PLUGIN_OPTIONS } from "./optionNames.ts";
import { type PluginRpcs, type WorkerPluginOptions, workerPluginSpec } from "./workerPlugins.ts";

/** Options of `Client.registerNannyPlugin`. */
export interface NannyPluginOptions extends WorkerPluginOptions {
  /**
   * Whether each nanny restarts its worker once it has set the plugin up
   * (Dask's `NannyPlugin.restart`), so that a fresh worker process has what
   * the setup changed. Default: as the plugin's own `restart` field says
   * (`environ`'s is true), else false.
   */
  readonly restart?: boolean;
}

const OP = "registerNannyPlugin";

/** The spec of a nanny plugin to register; throws a TypeError naming what is wrong. */
export function nannyPluginSpec(
  factory: TaskDefinition<TaskFunction> | string,
  options: NannyPluginOptions,
): NannyPluginSpec {
  const spec = workerPluginSpec(factory, options, OP, NANNY_PLUGIN_OPTIONS);
  checkOptionalBoolean(OP, "restart", options.restart);
  const problem = builtInArgsProblem(spec.fn, spec.args);
  if (problem !== null) throw new TypeError(`${OP}: ${problem}`);
  return options.restart === undefined ? spec : { ...spec, restart: options.restart };
}

/** Nanny plugins: each worker hands them to its nanny, which makes and keeps them. */
export const NANNY_PLUGIN_RPCS: PluginRpcs = {
  add: "nanny_plugin_add",
  remove: "nanny_plugin_remove",
  error: (address, plugin, why, options) => new NannyPluginError(address, plugin, why, options),
};
