// A module resolution hook (Node.js `module.register`) for the modules weft
// imports for a user (task modules, preloads, `weft run`'s graph module, the
// modules clients upload into the cluster) and every module they import.
//
// Weft itself (`weft`, `weft/worker`, …) is the running weft's entry points
// (`entries`: its sources when it runs from them), looked up before Node.js's
// own resolution, from any module: one copy of weft in a process, as a Dask
// worker has one `distributed`. Another copy (the project's own install beside
// a weft worker installed globally or run from a checkout; one installed above
// the temporary directory) has classes of its own: its `wait()` refused the
// futures of the task's `getClient()`, its `instanceof RemoteTaskError` missed
// the errors the worker's client throws.
//
// Uploaded modules (`Client.uploadFile`) are saved by a worker in a directory
// of its own under the system's temporary directory, where no node_modules is:
// a bare import there (a package) that Node.js cannot resolve is resolved as
// from the worker's working directory, then as from weft's own package, as a
// Python module uploaded to a Dask worker imports from the worker's sys.path.
//
// Plain JavaScript: the hooks run on a thread of their own, which no
// TypeScript loader may have reached (the build copies this file to dist/).

/** `/weft-uploads-<pid>-…/` in a module's URL: `worker/uploadDirectory.ts` made its directory. */
const UPLOADED = /\/weft-uploads-\d+-[^/]+\/[^/]+$/;

let fallbacks = [];
let entries = {};

export function initialize(data) {
  fallbacks = Array.isArray(data?.fallbacks) ? data.fallbacks : [];
  entries = typeof data?.entries === "object" && data.entries !== null ? data.entries : {};
}

function isBare(specifier) {
  return !/^(?:[./#]|[a-zA-Z][a-zA-Z\d+.-]*:)/.test(specifier);
}

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  const uploaded = typeof parent === "string" && UPLOADED.test(parent);
  // Weft first, before Node.js looks, whoever imports it: Node.js finds the project's
  // own install beside a task module (and above an upload directory under TMPDIR=$PWD/tmp).
  if (Object.hasOwn(entries, specifier)) {
    return await nextResolve(entries[specifier], context);
  }
  try {
    return await nextResolve(specifier, context);
  } catch (err) {
    if (err?.code !== "ERR_MODULE_NOT_FOUND" || !isBare(specifier) || !uploaded) throw err;
    for (const parentURL of fallbacks) {
      try {
        return await nextResolve(specifier, { ...context, parentURL });
      } catch {
        // Not there either: the next, then the original error.
      }
    }
    throw err;
  }
}
