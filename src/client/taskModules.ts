/**
 * `Client.loadTaskModules` (Dask's `upload_file`, for modules already on the
 * workers' machines): each worker there imports them at once (its
 * `load_task_modules` rpc); once all could, the scheduler records them, so
 * that every worker registering from then on imports them first.
 */

import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { PeerPool } from "../worker/peerPool.ts";
import { askEachWorker } from "./askWorkers.ts";
import { TaskModuleError } from "./errors.ts";

/** A task module as a file URL: a `file:` URL as it is, a path resolved against the current directory. */
export function taskModuleUrl(module: string | URL): string {
  if (module instanceof URL) {
    if (module.protocol !== "file:")
      throw new TypeError(`loadTaskModules: not a file URL: ${module.href}`);
    return module.href;
  }
  if (typeof module !== "string" || module === "") {
    throw new TypeError(
      `loadTaskModules: expected a path or file URL, got ${JSON.stringify(module)}`,
    );
  }
  if (module.startsWith("file:")) return new URL(module).href;
  if (URL.canParse(module) && !isAbsolute(module)) {
    throw new TypeError(`loadTaskModules: not a file URL or path: ${module}`);
  }
  return pathToFileURL(resolve(module)).href;
}

/** Have each worker of `addresses` import `modules`: `{address: task functions then defined}`, by address. */
export async function loadOnWorkers(
  peers: PeerPool,
  addresses: readonly string[],
  modules: readonly string[],
): Promise<Record<string, readonly string[]>> {
  const loaded = await askEachWorker(
    addresses,
    async (address): Promise<readonly string[] | TaskModuleError> => {
      try {
        const rpc = await peers.get(address);
        const r = (await rpc.call("load_task_modules", { modules: [...modules] })) as {
          status?: unknown;
          tasks?: unknown;
        } | null;
        if (r?.status === "OK" && Array.isArray(r.tasks)) return r.tasks as string[];
        return new TaskModuleError(address, `malformed answer: ${String(JSON.stringify(r))}`);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        return new TaskModuleError(address, why, { cause: err });
      }
    },
    (a) => (a instanceof TaskModuleError ? a : null),
  );
  // Every answer is a list now: an error would have been thrown.
  return loaded as Record<string, readonly string[]>;
}

/** `record` with its keys in order. */
export function sortedByKey<T>(record: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of Object.keys(record).sort()) out[k] = record[k];
  return out;
}
