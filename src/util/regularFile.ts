/**
 * Refusing a path that is no regular file before reading it whole: a symlink to
 * `/dev/zero` or `/dev/urandom`, a character device, read forever (its reads never
 * end), and a FIFO blocks until some process writes to it.
 */

import { type Stats, statSync } from "node:fs";
import { stat } from "node:fs/promises";

/** What a non-regular file is, in words ("a character device"). */
function kindOf(st: Stats): string {
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isSocket()) return "a socket";
  return "not a regular file";
}

/**
 * An error for `st` when it is not a regular file, or null. A directory gets
 * Node's own code, EISDIR, which the readers already say "it is a directory" of.
 */
function notRegular(st: Stats): Error | null {
  if (st.isFile()) return null;
  if (st.isDirectory()) {
    return Object.assign(new Error("cannot read the file: it is a directory"), { code: "EISDIR" });
  }
  return Object.assign(new Error(`cannot read the file: it is ${kindOf(st)}, not a regular file`), {
    code: "ENOTREGULAR",
  });
}

/**
 * The size of the regular file at `path` (symlinks followed), or throws: Node's
 * error (ENOENT, EACCES) when it cannot be stat'ed, one with the code
 * `ENOTREGULAR` (or EISDIR) when it is no regular file.
 */
export function regularFileSizeSync(path: string | URL): number {
  const st = statSync(path);
  const err = notRegular(st);
  if (err !== null) throw err;
  return st.size;
}

/** Asynchronous {@link regularFileSizeSync}. */
export async function regularFileSize(path: string | URL): Promise<number> {
  const st = await stat(path);
  const err = notRegular(st);
  if (err !== null) throw err;
  return st.size;
}

/**
 * Why the file at `path` (symlinks followed) must not be read, when it is a
 * device or a FIFO ("it is a character device, not a regular file"), or null:
 * a regular file, a directory, or one that cannot be stat'ed (missing, not
 * allowed) is left to the reader, which says so in its own words.
 */
export function deviceProblemSync(path: string): string | null {
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    return null;
  }
  return st.isFile() || st.isDirectory() ? null : `it is ${kindOf(st)}, not a regular file`;
}

/** Asynchronous {@link deviceProblemSync}. */
export async function deviceProblem(path: string): Promise<string | null> {
  const st = await stat(path).catch(() => null);
  if (st === null || st.isFile() || st.isDirectory()) return null;
  return `it is ${kindOf(st)}, not a regular file`;
}
