/**
 * Import a task module for a worker's tasks, one at a time on this thread,
 * unregistering what it defined if its import fails: a module that throws
 * while it is evaluated (`null.x` after a `defineTask("a", …)`) has defined
 * "a" by then, and tasks named "a" ran that function of a module the worker
 * reported it could not import, silently; and the fixed module, uploaded
 * again, could not define "a" (`already defined`). Imports are one at a time
 * so that what a failed import defined is known: the task functions it leaves
 * behind are those registered since it began. (A function a module registers
 * later, from a timer or a promise of its own, is not seen.)
 */

import { importModule } from "../util/importModule.ts";
import { forgetTaskFunctions, taskFunctionNames } from "./taskRegistry.ts";

/** The last import of this thread, settled or not: the next one waits for it. */
let last: Promise<unknown> = Promise.resolve();

/** {@link importModule} of `url`, undoing its task functions if it fails. */
export function importTaskModule(url: string): Promise<Record<string, unknown>> {
  const next = last.then(async () => {
    const before = new Set(taskFunctionNames());
    try {
      return await importModule(url);
    } catch (err) {
      forgetTaskFunctions(taskFunctionNames().filter((name) => !before.has(name)));
      throw err;
    }
  });
  last = next.catch(() => {});
  return next;
}
