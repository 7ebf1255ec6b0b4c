/**
 * Import a user's module (a task module, a graph module) by file URL, also
 * when it is TypeScript and nothing taught Node.js to load that: tsx's loader
 * is then registered for this thread and the import tried again.
 */

import { isUploadedModule, resolveUploadedImports } from "./uploadImports.ts";

const TYPESCRIPT = /\.(?:[mc]?ts|tsx)$/;

/** Errors of Node.js (20: every `.ts`; 22: what type stripping cannot do) that tsx fixes. */
const TYPESCRIPT_LOAD_ERRORS = new Set([
  "ERR_UNKNOWN_FILE_EXTENSION",
  "ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING",
  "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX",
  "ERR_INVALID_TYPESCRIPT_SYNTAX",
]);

let tsxRegistered = false;

/**
 * A TypeScript module of a CommonJS package (`.ts` without `"type": "module"`)
 * is loaded as CommonJS, and then cannot import weft (ESM only): Node.js says so
 * in words that do not point at the cause.
 */
function explained(err: unknown, url: string): unknown {
  const code = String((err as { code?: unknown } | null)?.code);
  const message = err instanceof Error ? err.message : "";
  const path = URL.canParse(url) ? new URL(url).pathname : url;
  if (
    /\.(?:c?ts|tsx)$/.test(path) &&
    (code === "ERR_REQUIRE_CYCLE_MODULE" ||
      code === "ERR_REQUIRE_ESM" ||
      /require\(\) ES Module/.test(message))
  ) {
    return new Error(
      `cannot import ${url}: it is loaded as CommonJS (its package.json has no "type": "module"), ` +
        'which cannot import weft (an ES module): name it .mts, or add "type": "module"',
      { cause: err },
    );
  }
  return err;
}

/** `import(url)`, registering tsx first when Node.js cannot load the TypeScript module by itself. */
export async function importModule(url: string): Promise<Record<string, unknown>> {
  if (isUploadedModule(url)) resolveUploadedImports();
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    const isTypeScript = URL.canParse(url) && TYPESCRIPT.test(new URL(url).pathname);
    if (!isTypeScript || !TYPESCRIPT_LOAD_ERRORS.has(String(code))) throw explained(err, url);
  }
  if (!tsxRegistered) {
    let register: () => unknown;
    try {
      ({ register } = await import("tsx/esm/api"));
    } catch (cause) {
      throw new Error(
        `cannot import ${url}: Node.js cannot load TypeScript here and tsx cannot be loaded ` +
          "(install tsx, run node with --import tsx, or compile the module to JavaScript)",
        { cause },
      );
    }
    register();
    tsxRegistered = true;
  }
  // A failed import is cached by URL (also when it is imported again later, after
  // tsx was registered): ask under another one, the same each time, so that a module
  // imported twice is one module.
  const retry = new URL(url);
  retry.searchParams.set("weft-tsx", "1");
  try {
    return (await import(retry.href)) as Record<string, unknown>;
  } catch (err) {
    throw explained(err, url);
  }
}
