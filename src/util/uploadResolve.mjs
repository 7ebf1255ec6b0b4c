// A module resolution hook (Node.js `module.register`) for the modules clients
// upload into the cluster (`Client.uploadFile`). A worker saves them in a
// directory of its own under the system's temporary directory, where no
// node_modules is: a bare import there (`weft`, a package) that Node.js cannot
// resolve is resolved as from the worker's working directory, then as from
// weft's own package, as a Python module uploaded to a Dask worker imports
// from the worker's sys.path. Weft itself (`weft`, `weft/worker`, …) is the
// running weft's entry points (`entries`: its sources when it runs from them),
// looked up before Node.js's own resolution, never another copy (one installed
// above the temporary directory included), whose futures, classes and codec
// would not be the worker's.
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
  // Weft first, before Node.js looks: with the temporary directory inside a project
  // (TMPDIR=$PWD/tmp), it found the project's own install above the upload directory.
  if (uploaded && Object.hasOwn(entries, specifier)) {
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
