/**
 * `Client.loadTaskModules` (Dask's `upload_file`, for modules already on the
 * workers' machines): each worker there imports them at once (its
 * `load_task_modules` rpc); once all could, the scheduler records them, so
 * that every worker registering from then on imports them first.
 */

import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { showValue } from "../util/showValue.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { callEachWorkerOrFail } from "./askWorkers.ts";
import { TaskModuleError } from "./errors.ts";

/** A task module as a file URL: a `file:` URL as it is, a path resolved against the current directory. */
export function taskModuleUrl(module: string | URL): string {
  if (module instanceof URL) {
    if (module.protocol !== "file:")
      throw new TypeError(`loadTaskModules: not a file URL: ${module.href}`);
    return module.href;
  }
  if (typeof module !== "string" || module === "") {
    throw new TypeError(`loadTaskModules: expected a path or file URL, got ${showValue(module)}`);
  }
  if (module.startsWith("file:")) return new URL(module).href;
  if (URL.canParse(module) && !isAbsolute(module)) {
    throw new TypeError(`loadTaskModules: not a file URL or path: ${module}`);
  }
  return pathToFileURL(resolve(module)).href;
}

/** Have each worker of `addresses` import `modules`: `{address: task functions then defined}`, by address. */
export function loadOnWorkers(
  peers: PeerPool,
  addresses: readonly string[],
  modules: readonly string[],
  left?: (address: string) => Promise<boolean>,
): Promise<Record<string, readonly string[]>> {
  return askForTasks(
    peers,
    addresses,
    "load_task_modules",
    { modules: [...modules] },
    (address, why, cause) => new TaskModuleError(address, why, { cause }),
    left,
  );
}

/**
 * Ask each worker of `addresses` the rpc `op` whose answer is `{status: "OK",
 * tasks}` (the task functions then defined): `{address: tasks}`, by address;
 * rejects with `failed(address, why)` of the first worker, by address, that
 * could not do it or could not be asked (but for one that could not be asked
 * and `left` says left the cluster: left out).
 */
export function askForTasks(
  peers: PeerPool,
  addresses: readonly string[],
  op: string,
  args: Record<string, unknown>,
  failed: (address: string, why: string, cause?: unknown) => Error,
  left?: (address: string) => Promise<boolean>,
): Promise<Record<string, readonly string[]>> {
  return callEachWorkerOrFail(
    peers,
    addresses,
    op,
    args,
    (got) => {
      const r = got as { status?: unknown; tasks?: unknown } | null;
      return r?.status === "OK" && Array.isArray(r.tasks) ? (r.tasks as string[]) : null;
    },
    failed,
    left,
  );
}
