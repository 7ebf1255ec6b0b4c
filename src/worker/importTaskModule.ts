/**
 * Import a task module for a worker's tasks, unregistering what it defined if
 * its import fails: a module that throws while it is evaluated (`null.x`
 * after a `defineTask("a", …)`) has defined "a" by then, and tasks named "a"
 * ran that function of a module the worker reported it could not import,
 * silently; and the fixed module could not define "a" again (`already
 * defined`). What a failed import defined is what was registered since it
 * began, known only if no import of another module ran meanwhile on this
 * thread (two workers of a process importing the same module share its one
 * evaluation): if one did, the definitions are kept, as they might be the
 * other module's. Imports are not made to wait for one another, as one whose
 * top-level `await` never settles would hold up every later one (another
 * worker of the process starting, say). A function a module registers later,
 * from a timer or a promise of its own, is not seen.
 */

import { importModule } from "../util/importModule.ts";
import { forgetTaskFunctions, taskFunctionNames } from "./taskRegistry.ts";

/** An import under way on this thread. */
interface Importing {
  readonly url: string;
  /** An import of another module ran during it. */
  overlapped: boolean;
}

/** The imports under way on this thread. */
const importing = new Set<Importing>();

/** {@link importModule} of `url`, undoing its task functions if it fails. */
export async function importTaskModule(url: string): Promise<Record<string, unknown>> {
  const own: Importing = { url, overlapped: false };
  for (const other of importing) {
    if (other.url !== url) {
      other.overlapped = true;
      own.overlapped = true;
    }
  }
  importing.add(own);
  const before = new Set(taskFunctionNames());
  try {
    return await importModule(url);
  } catch (err) {
    if (!own.overlapped) {
      forgetTaskFunctions(taskFunctionNames().filter((name) => !before.has(name)));
    }
    throw err;
  } finally {
    importing.delete(own);
  }
}
