/**
 * What `weft run FILE --scheduler` adds to a task that failed because no worker
 * defines its function, when FILE names task modules (`"tasks"`): those are loaded
 * by an embedded cluster only (a running scheduler's workers may be on other
 * machines, where the paths are not), and the failure said only that the function
 * was unknown, leaving the user to find out that the file's modules were not sent.
 */

import { fileURLToPath } from "node:url";
import { RemoteTaskError } from "../../client/errors.ts";

/**
 * The line to add for `err`, the failure of a graph from `file` computed on a
 * running scheduler, whose `"tasks"` are `taskModules` (file URLs); "" unless it
 * failed for an unknown task function and the file names task modules.
 */
export function graphTasksHint(err: unknown, file: string, taskModules: readonly string[]): string {
  if (taskModules.length === 0) return "";
  if (!(err instanceof RemoteTaskError) || err.remoteName !== "UnknownTaskFunctionError") return "";
  const named = taskModules.map((url) => (url.startsWith("file:") ? fileURLToPath(url) : url));
  return (
    `${file} names task modules ("tasks": ${named.join(", ")}), which weft run loads into ` +
    "an embedded cluster only: with --scheduler, start the workers with --tasks naming " +
    "them (or modules defining the same tasks), or give them to weft run with --tasks"
  );
}
