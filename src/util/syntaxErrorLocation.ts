/**
 * Where the syntax error of a JavaScript module is. Node.js's SyntaxError for
 * an ES module it cannot parse says what (`missing ) after argument list`) but
 * neither the file nor the line, which it prints only for an uncaught error;
 * tsx's loader, once registered, says `Parse error <file>:1:1` whatever the
 * line (a bundler's loader, vitest's, says neither). A worker asked to import
 * a task module it cannot parse would pass on no more. `node --check` prints the place: asked only once the import failed.
 */

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { cutEnd } from "./cutText.ts";

/** JavaScript files (TypeScript ones are compiled by tsx, whose errors say where). */
const JAVASCRIPT = /\.[mc]?js$/;

/** How long `node --check` may take. */
const CHECK_TIMEOUT_MS = 10_000;

/**
 * `err`, the failure of importing the module `url`, or, when it is a syntax
 * error of that module's own file, a SyntaxError saying where
 * (`missing ) after argument list (/x/tasks.mjs:3: defineTask("s", () => 1;)`),
 * `err` its cause. A syntax error of a module it imports is not looked for.
 */
export async function locatedSyntaxError(err: unknown, url: string): Promise<unknown> {
  if (!(err instanceof Error)) return err;
  // Node.js's SyntaxError; tsx's "Parse error"; a bundler's "Failed to parse source".
  if (err.name !== "SyntaxError" && !/\bparse\b/i.test(err.message)) return err;
  if (!URL.canParse(url) || new URL(url).protocol !== "file:") return err;
  const path = fileURLToPath(new URL(url).href.replace(/[?#].*$/, ""));
  if (!JAVASCRIPT.test(path)) return err;
  const stderr = await new Promise<string>((resolve) => {
    execFile(
      process.execPath,
      ["--check", path],
      { timeout: CHECK_TIMEOUT_MS, encoding: "utf8" },
      (_error, _stdout, text) => resolve(typeof text === "string" ? text : ""),
    );
  });
  // "<path>:<line>", the line's code, a caret line, "", "SyntaxError: <what>".
  const lines = stderr.split("\n");
  const place = /^(.*):(\d+)$/.exec(lines[0] ?? "");
  const what = lines.find((l) => l.startsWith("SyntaxError: "));
  if (place === null || place[1] !== path || what === undefined) return err;
  const code = (lines[1] ?? "").trim();
  const shown = code.length > 80 ? `${code.slice(0, cutEnd(code, 80))}…` : code;
  return new SyntaxError(
    `${what.slice("SyntaxError: ".length)} (${path}:${place[2]}${shown === "" ? "" : `: ${shown}`})`,
    { cause: err },
  );
}
