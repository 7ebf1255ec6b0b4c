/**
 * Import a user's module (a task module, a graph module) by file URL, also
 * when it is TypeScript and nothing taught Node.js to load that: tsx's loader
 * is then registered for this thread and the import tried again; and again
 * once a module it imports, missing at first, is there, or once its file,
 * which threw or did not parse, has changed.
 */

import { existsSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fileDigest } from "./fileDigest.ts";
import { deviceProblem } from "./regularFile.ts";
import { locatedSyntaxError } from "./syntaxErrorLocation.ts";
import { resolveUserModuleImports } from "./uploadImports.ts";

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

/**
 * Modules whose import failed for want of a module they import (a file not
 * there yet: an uploaded module's sibling uploaded after it; a package not
 * installed yet), by URL: the URL to ask next (`next`: 0 the module's own,
 * `n` with `weft-retry=n`) and the file found missing (null for a package).
 * Node.js keeps that failure for the module's URL, and gives it again at every
 * import, the file since saved or the package installed; nothing of the module
 * ran (a graph is linked before it is evaluated), so the next import asks under
 * another URL, which resolves its imports again. While the missing file is
 * still not there, the URL that failed is asked again instead: each URL keeps
 * a failed module in the thread for good, and a scheduler asks again at every
 * request of a function it does not know. One record per thread, as each
 * thread has its module cache: the workers of one process import the same URL,
 * one module.
 */
const missingImports = new Map<string, { next: number; missing: string | null }>();

/**
 * Modules whose import failed otherwise (they threw as they were evaluated,
 * did not parse), by URL: the URL to ask next (as {@link missingImports}) and
 * a digest of the file's bytes then. Node.js keeps that failure for the URL
 * too, so that a module fixed on disk and loaded again (`loadTaskModules`)
 * failed as before in that process for good, a `LocalCluster`'s workers (the
 * client's process) even after `client.restart()`. Once its bytes differ, the
 * module is asked under another URL; while they are the same, under the one
 * that failed (no module evaluated again, nor kept, at each try). Once one
 * imported, its URL is asked from then on, whatever the file holds: a module
 * imported stays imported.
 */
const failedImports = new Map<string, { next: number; digest: string | null }>();

/**
 * The digest of the bytes Node.js evaluated for each module imported on this
 * thread, by the URL asked for (what {@link importedDigest} gives), and of
 * each URL asked under, read as its first import began (`null`: not a file,
 * or unreadable). The module cache is the thread's and outlives the workers
 * importing in it (a `LocalCluster`'s inline workers, after
 * `client.restart()`): a later import of the URL gets the module first
 * evaluated, whatever its file holds now, so the first import's bytes are
 * kept, not those read after a later one.
 */
const importedDigests = new Map<string, string | null>();
const askedDigests = new Map<string, string | null>();

/**
 * The digest of the bytes of `url` that Node.js evaluated on this thread (the
 * file as its first import that succeeded began: see `fileDigest`), `null` if
 * they could not be read, `undefined` if it was not imported here.
 */
export function importedDigest(url: string): string | null | undefined {
  return importedDigests.get(url);
}

/**
 * `import(url)`, registering tsx first when Node.js cannot load the TypeScript
 * module by itself; once an import of it failed for want of a module it
 * imports, or failed otherwise and its file changed since, under another URL
 * (see {@link missingImports}, {@link failedImports}).
 */
export async function importModule(url: string): Promise<Record<string, unknown>> {
  await refuseDevice(url);
  const retry = retryOf(url);
  const asked = retry === 0 ? url : withParam(url, "weft-retry", String(retry));
  if (!askedDigests.has(asked)) askedDigests.set(asked, isFileUrl(url) ? fileDigest(url) : null);
  try {
    const module = await importOnce(asked);
    if (!importedDigests.has(url)) importedDigests.set(url, askedDigests.get(asked) ?? null);
    return module;
  } catch (err) {
    // Once for the imports of one URL that failed together (two workers of a process).
    const first = Math.max(missingImports.get(url)?.next ?? 0, failedImports.get(url)?.next ?? 0);
    if (isMissingImport(err)) {
      if (first === retry) missingImports.set(url, { next: retry + 1, missing: missingFile(err) });
      throw stillMissing(err);
    }
    if (first === retry && isFileUrl(url)) {
      failedImports.set(url, { next: retry + 1, digest: fileDigest(url) });
    }
    throw await located(err, asked);
  }
}

/**
 * Refuse the file of `url` when it is a device or a FIFO, naming it: Node.js
 * would import a link to `/dev/zero` reading it without end, and a FIFO
 * waiting for a writer, never answering either way.
 */
async function refuseDevice(url: string): Promise<void> {
  if (!isFileUrl(url)) return;
  const problem = await deviceProblem(fileURLToPath(url));
  if (problem !== null) {
    throw Object.assign(new Error(`cannot import ${url}: ${problem}`), { code: "ENOTREGULAR" });
  }
}

/** Which URL to ask `url` under: 0 its own, `n` with `weft-retry=n` (see {@link missingImports}, {@link failedImports}). */
function retryOf(url: string): number {
  const missing = missingImports.get(url);
  const failed = failedImports.get(url);
  // The latest record says what failed last.
  if (failed !== undefined && (missing === undefined || failed.next > missing.next)) {
    const unchanged = failed.digest !== null && fileDigest(url) === failed.digest;
    return unchanged ? failed.next - 1 : failed.next;
  }
  if (missing === undefined) return 0;
  const stillAbsent = missing.missing !== null && !existsSync(missing.missing);
  return stillAbsent ? missing.next - 1 : missing.next;
}

/** True for a `file:` URL. */
function isFileUrl(url: string): boolean {
  return URL.canParse(url) && new URL(url).protocol === "file:";
}

/**
 * Syntax errors said where, by the URL that failed: Node.js keeps a module's
 * failure to parse, and a scheduler tries a module that failed again at every
 * request of a function it does not know, which is not to run `node --check`
 * each time.
 */
const locatedErrors = new Map<string, { from: unknown; located: Promise<unknown> }>();

/** {@link locatedSyntaxError} of `err`, the failure of importing `url`, once for the same failure. */
function located(err: unknown, url: string): Promise<unknown> {
  const known = locatedErrors.get(url);
  if (known !== undefined && known.from === err) return known.located;
  const fresh = locatedSyntaxError(err, url);
  locatedErrors.set(url, { from: err, located: fresh });
  return fresh;
}

/** `url` with the query parameter `name` set to `value`. */
function withParam(url: string, name: string, value: string): string {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u.href;
}

/** True for Node.js's error for a module or package an import names that is not there. */
function isMissingImport(err: unknown): boolean {
  const cause = (err as { cause?: unknown } | null)?.cause;
  return [err, cause].some(
    (e) => (e as { code?: unknown } | null)?.code === "ERR_MODULE_NOT_FOUND",
  );
}

/**
 * The missing file of `err` may be there now, and the import still fail: it
 * was missing as a module importing it (not the one asked for) was first
 * imported, and Node.js keeps that module's failure as long as the thread runs.
 * Says so, rather than that a file there is not.
 */
function stillMissing(err: unknown): unknown {
  const missing = missingFile(err);
  if (missing === null || !existsSync(missing)) return err;
  return Object.assign(
    new Error(
      `${(err as Error).message}: it is there now, but was not when that module was first imported, and Node.js ` +
        "keeps that failure for as long as this process runs (upload or write what a module imports before it; " +
        "give the module that failed another name, or restart the process)",
      { cause: err },
    ),
    { code: "ERR_MODULE_NOT_FOUND", url: pathToFileURL(missing).href },
  );
}

/** The path of the file a module-not-found error names: its `url`, else its message's (a loader's own error). */
function missingFile(err: unknown): string | null {
  const url = (err as { url?: unknown } | null)?.url;
  if (typeof url === "string" && URL.canParse(url)) {
    const u = new URL(url);
    return u.protocol === "file:" ? fileURLToPath(u) : null;
  }
  const message = err instanceof Error ? err.message : "";
  const m = /Cannot find module '([^']+)' imported from (\/.+)$/.exec(message);
  if (m === null) return null;
  const [, specifier, importer] = m as unknown as [string, string, string];
  if (isAbsolute(specifier)) return specifier;
  return specifier.startsWith(".") ? resolve(dirname(importer), specifier) : null;
}

/** `import(url)`, registering tsx first when Node.js cannot load the TypeScript module by itself. */
async function importOnce(url: string): Promise<Record<string, unknown>> {
  // Before the module is linked: a module's imports are resolved once, by the hooks there then.
  resolveUserModuleImports(url);
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
