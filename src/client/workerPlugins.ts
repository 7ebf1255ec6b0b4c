/**
 * `Client.registerWorkerPlugin` and `unregisterWorkerPlugin` (Dask's): each
 * worker there makes the plugin with a task function of its task modules and
 * sets it up at once (its `plugin_add` rpc); once all could, the scheduler
 * records it, so that every worker registering from then on sets it up too.
 */

import { noPluginRecorded, type WorkerPluginSpec } from "../protocol/messagesSession.ts";
import type { OptionNames } from "../util/knownOptions.ts";
import { showValue } from "../util/showValue.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import type { TaskDefinition, TaskFunction } from "../worker/taskRegistry.ts";
import { knownOptionsOf } from "./argChecks.ts";
import { callEachWorkerOrFail } from "./askWorkers.ts";
import { SchedulerReplyError, WorkerPluginError } from "./errors.ts";
import { WORKER_PLUGIN_OPTIONS } from "./optionNames.ts";

/** Options of `Client.registerWorkerPlugin`. */
export interface WorkerPluginOptions {
  /** Under which name (default, or null: the task function's); a plugin of that name is replaced. */
  readonly name?: string | null;
  /** What the task function is called with: JSON data. Default none. */
  readonly args?: readonly unknown[];
}

/** The spec of a plugin to register; throws a TypeError naming what is wrong. */
export function workerPluginSpec(
  factory: TaskDefinition<TaskFunction> | string,
  options: WorkerPluginOptions,
  op = "registerWorkerPlugin",
  known: OptionNames<WorkerPluginOptions> = WORKER_PLUGIN_OPTIONS,
): WorkerPluginSpec {
  const fn = typeof factory === "string" ? factory : factory?.name;
  if (typeof fn !== "string" || fn === "") {
    throw new TypeError(
      `${op}: expected a task function (defineTask) or its name, whose result is the plugin, got ${showValue(factory)}`,
    );
  }
  knownOptionsOf(op, options, known);
  const name = options.name ?? fn;
  if (typeof name !== "string" || name === "") {
    throw new TypeError(`${op}: name must be a non-empty string, got ${showValue(name)}`);
  }
  const args = options.args ?? [];
  if (!Array.isArray(args)) {
    throw new TypeError(`${op}: args must be an array, got ${showValue(args)}`);
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(args);
  } catch {
    json = undefined;
  }
  if (json === undefined || !sameJson(args, JSON.parse(json))) {
    throw new TypeError(`${op}: args must be JSON data (the scheduler keeps them)`);
  }
  return { name, fn, args: JSON.parse(json) as unknown[] };
}

/** True if `a` survives JSON as `b` (no undefined, functions, Maps, typed arrays, NaN…). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === null || typeof a === "string" || typeof a === "boolean") return a === b;
  if (typeof a === "number") return Number.isFinite(a) && a === b;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  }
  if (typeof a === "object" && Object.getPrototypeOf(a) === Object.prototype) {
    if (typeof b !== "object" || b === null || Array.isArray(b)) return false;
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length &&
      ka.every((k) =>
        sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return false;
}

/**
 * How a kind of plugin is added to and removed from each worker: its rpcs, and
 * the error that names a worker where it failed.
 */
export interface PluginRpcs {
  readonly add: string;
  readonly remove: string;
  error(address: string, plugin: string, why: string, options: { cause: unknown }): Error;
}

/** Worker plugins: the worker itself makes and keeps them. */
export const WORKER_PLUGIN_RPCS: PluginRpcs = {
  add: "plugin_add",
  remove: "plugin_remove",
  error: (address, plugin, why, options) => new WorkerPluginError(address, plugin, why, options),
};

/** Have each worker of `addresses` make and set up `spec` (by `rpcs.add`): `{address: "OK"}`, by address. */
export function addOnEach(
  peers: PeerPool,
  addresses: readonly string[],
  spec: WorkerPluginSpec,
  rpcs: PluginRpcs,
  left?: (address: string) => Promise<boolean>,
): Promise<Record<string, "OK">> {
  return callEachWorkerOrFail(
    peers,
    addresses,
    rpcs.add,
    { ...spec },
    (got) => ((got as { status?: unknown } | null)?.status === "OK" ? "OK" : null),
    (address, why, cause) => rpcs.error(address, spec.name, why, { cause }),
    left,
  );
}

/**
 * Have each worker of `addresses` remove and tear down `name` (by
 * `rpcs.remove`): `{address: whether it had it}`, by address.
 */
export function removeOnEach(
  peers: PeerPool,
  addresses: readonly string[],
  name: string,
  rpcs: PluginRpcs,
): Promise<Record<string, boolean>> {
  return callEachWorkerOrFail(
    peers,
    addresses,
    rpcs.remove,
    { name },
    (got) => {
      const removed = (got as { removed?: unknown } | null)?.removed;
      return typeof removed === "boolean" ? removed : null;
    },
    (address, why, cause) => rpcs.error(address, name, `teardown: ${why}`, { cause }),
  );
}

/**
 * Unregister plugin `name`: `forget` it at the scheduler (request `op`), then
 * `remove` it from the workers, `{address: whether it had it}`. A plugin the
 * scheduler has not recorded may still be on workers (its registration
 * failed on another, after these had set it up): they are asked all the
 * same, and the scheduler's refusal stands if none had it, or if asking
 * failed (a `LocalCluster`'s workers have no nanny taking plugins: the
 * refusal says more than their errors).
 */
export async function unregisterPlugin(
  op: string,
  kind: "worker" | "nanny",
  name: string,
  forget: () => Promise<unknown>,
  remove: () => Promise<Record<string, boolean>>,
): Promise<Record<string, boolean>> {
  let refusal: SchedulerReplyError | null = null;
  try {
    await forget();
  } catch (err) {
    const unrecorded =
      err instanceof SchedulerReplyError && err.reason === noPluginRecorded(op, kind, name);
    if (!unrecorded) throw err;
    refusal = err;
  }
  if (refusal === null) return remove();
  const removed = await remove().catch(() => null);
  if (removed === null || !Object.values(removed).includes(true)) throw refusal;
  return removed;
}
