/**
 * Whether a file can be written at a path, asked before the code whose report
 * goes there runs (`performanceReport`, `profile`'s `path`), as the commands
 * check theirs (`outputProblem`): written only once the code is over, a path in
 * a directory that is not there (a typo, a directory not made yet) failed then,
 * after hours of computing, and the code's value was lost with the report.
 *
 * The errors say the call and the path, and carry the `code` of Node.js's file
 * error that says why (`ENOENT`, `ENOTDIR`, `EISDIR`, `EACCES`, …) and the
 * `path`, as Node.js's own do: refused before the code runs or failing as the
 * file is written at the end (a full disk, a directory removed meanwhile), a
 * caller tells them apart by `code` alike, where the first was an Error with
 * none and the second Node.js's error, which did not say the call.
 */

import { fileURLToPath } from "node:url";
import { outputFailure } from "../util/outputFile.ts";

/** An error of a file that cannot be written: the call's message, the file error's `code` and the `path`. */
export type UnwritableError = Error & { readonly code: string; readonly path: string };

/** The error `${what}: cannot write to ${path}: ${why}` with `code` and `path` (and `cause`, if given). */
export function unwritableError(
  what: string,
  path: string,
  why: string,
  code: string,
  cause?: unknown,
): UnwritableError {
  const err = new Error(
    `${what}: cannot write to ${path}: ${why}`,
    cause === undefined ? undefined : { cause },
  );
  return Object.assign(err, { code, path });
}

/**
 * Resolves if a file can be written at `path` (a file path or a `file:` URL):
 * one there that this process may replace, or a new one in a directory it may
 * write in. Rejects otherwise with an {@link UnwritableError} naming `what` (the
 * call), the path and why. Nothing is created or changed.
 */
export async function checkWritablePath(what: string, path: string | URL): Promise<void> {
  let file: string;
  try {
    file = path instanceof URL ? fileURLToPath(path) : path;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "ERR_INVALID_URL";
    throw unwritableError(what, String(path), (err as Error).message, code, err);
  }
  const failure = await outputFailure(file);
  if (failure !== null) throw unwritableError(what, file, failure.why, failure.code);
}

/**
 * `write()`, the writing of the file at `path` once the work is over: a file
 * error of it (Node.js's, which has a `syscall`: a full disk, a directory
 * removed meanwhile) becomes an {@link UnwritableError} naming `what`, with its
 * `code`, the file error its `cause`; any other error is left as it is.
 */
export async function writing(
  what: string,
  path: string | URL,
  write: () => Promise<void>,
): Promise<void> {
  try {
    await write();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (typeof e?.syscall !== "string" || typeof e.code !== "string") throw err;
    throw unwritableError(what, filePath(path), e.message, e.code, err);
  }
}

/**
 * `path` as the errors say it: a `file:` URL as its file's path, as
 * {@link checkWritablePath} and Node.js's own file errors say it (any other URL,
 * refused by that check, as it is).
 */
function filePath(path: string | URL): string {
  if (!(path instanceof URL)) return path;
  try {
    return fileURLToPath(path);
  } catch {
    return path.href;
  }
}
