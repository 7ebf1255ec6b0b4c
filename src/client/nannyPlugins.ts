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
import type { PeerPool } from "../worker/peerPool.ts";
import type { TaskDefinition, TaskFunction } from "../worker/taskRegistry.ts";
import { checkOptionalBoolean } from "./argChecks.ts";
import { callEachWorkerOrFail } from "./askWorkers.ts";
import { NannyPluginError } from "./errors.ts";
import { type WorkerPluginOptions, workerPluginSpec } from "./workerPlugins.ts";

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
  const spec = workerPluginSpec(factory, options, OP);
  checkOptionalBoolean(OP, "restart", options.restart);
  const problem = builtInArgsProblem(spec.fn, spec.args);
  if (problem !== null) throw new TypeError(`${OP}: ${problem}`);
  return options.restart === undefined ? spec : { ...spec, restart: options.restart };
}

/** Have the nanny of each worker of `addresses` make and set up `spec`: `{address: "OK"}`, by address. */
export function addOnNannies(
  peers: PeerPool,
  addresses: readonly string[],
  spec: NannyPluginSpec,
): Promise<Record<string, "OK">> {
  return callEachWorkerOrFail(
    peers,
    addresses,
    "nanny_plugin_add",
    { ...spec },
    (got) => ((got as { status?: unknown } | null)?.status === "OK" ? "OK" : null),
    (address, why, cause) => new NannyPluginError(address, spec.name, why, { cause }),
  );
}

/** Have the nanny of each worker of `addresses` remove and tear down `name`: `{address: whether it had it}`. */
export function removeOnNannies(
  peers: PeerPool,
  addresses: readonly string[],
  name: string,
): Promise<Record<string, boolean>> {
  return callEachWorkerOrFail(
    peers,
    addresses,
    "nanny_plugin_remove",
    { name },
    (got) => {
      const removed = (got as { removed?: unknown } | null)?.removed;
      return typeof removed === "boolean" ? removed : null;
    },
    (address, why, cause) => new NannyPluginError(address, name, `teardown: ${why}`, { cause }),
  );
}
