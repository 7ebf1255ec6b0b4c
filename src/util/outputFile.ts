/**
 * Checks of the files a command writes once its work is done (a profile, a
 * dump, a task stream), made before the work: a path that cannot be written
 * is otherwise found out only at the end, when the minutes spent are lost.
 */

import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { dirname, resolve, sep } from "node:path";

/**
 * Why a file cannot be written at a path, and the code of Node.js's file
 * error that says the same (`ENOENT`: its directory is not there; `ENOTDIR`: a
 * file stands where a directory should; `EISDIR`: it is a directory;
 * `EACCES`, `EROFS`, …: not allowed), so that a caller's error carries the
 * `code` a failed write of it would.
 */
export interface OutputFailure {
  readonly why: string;
  readonly code: string;
}

/** The code of a file error (`UNKNOWN`, as libuv says, for an error without one). */
function codeOf(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" ? code : "UNKNOWN";
}

/** Why no file can be made in the directory `path` would be in, or null. */
export async function directoryFailure(path: string): Promise<OutputFailure | null> {
  const dir = dirname(resolve(path));
  try {
    if (!(await stat(dir)).isDirectory())
      return { why: `${dir} is not a directory`, code: "ENOTDIR" };
    await access(dir, constants.W_OK);
    return null;
  } catch (err) {
    const code = codeOf(err);
    if (code === "ENOENT") return { why: `no such directory: ${dir}`, code };
    if (code === "ENOTDIR") return { why: `${dir} is not a directory`, code };
    return { why: `cannot write in ${dir} (${code})`, code };
  }
}

/** Why `path` cannot be written (made, or replaced if it is a file), or null. */
export async function outputFailure(path: string): Promise<OutputFailure | null> {
  try {
    if ((await stat(path)).isDirectory()) return { why: "it is a directory", code: "EISDIR" };
    await access(path, constants.W_OK);
    return null;
  } catch (err) {
    const code = codeOf(err);
    if (code === "ENOENT") return directoryFailure(path);
    if (code === "ENOTDIR") return { why: `${dirname(resolve(path))} is not a directory`, code };
    return { why: `cannot write it (${code})`, code };
  }
}

/**
 * Why `name`, a file name to which a format's extension may still be added (a
 * cluster dump's), cannot be one: it is empty, a directory, or ends as one does.
 * Adding the extension would write the hidden `.msgpack.gz` here, `DIR.msgpack.gz`
 * beside the directory, or the hidden `DIR/.msgpack.gz` in it, none where the user
 * pointed.
 */
export async function fileNameFailure(name: string): Promise<OutputFailure | null> {
  if (name === "") return { why: "the name is empty", code: "ENOENT" };
  if (name.endsWith("/") || name.endsWith(sep)) {
    return { why: "it names a directory (it ends with /)", code: "EISDIR" };
  }
  try {
    return (await stat(name)).isDirectory() ? { why: "it is a directory", code: "EISDIR" } : null;
  } catch {
    return null; // a name that does not exist yet: the other checks say what else is wrong
  }
}

/**
 * Why a cluster dump cannot be written under `name`, which the format's extension
 * made `path`: the name cannot be one ({@link fileNameFailure}), its directory takes
 * no file, or the file there cannot be replaced (said of `path` when the extension
 * was added); or null. Asked before the cluster is asked for its state, by `weft
 * dump` and `client.dumpClusterState` alike.
 */
export async function dumpNameFailure(name: string, path: string): Promise<OutputFailure | null> {
  const inDirectory = (await fileNameFailure(name)) ?? (await directoryFailure(name));
  if (inDirectory !== null) return inDirectory;
  const asFile = await outputFailure(path);
  return asFile === null || path === name ? asFile : { ...asFile, why: `${path}: ${asFile.why}` };
}

/** {@link directoryFailure}'s reason alone. */
export async function directoryProblem(path: string): Promise<string | null> {
  return (await directoryFailure(path))?.why ?? null;
}

/** {@link outputFailure}'s reason alone. */
export async function outputProblem(path: string): Promise<string | null> {
  return (await outputFailure(path))?.why ?? null;
}

/** {@link fileNameFailure}'s reason alone. */
export async function fileNameProblem(name: string): Promise<string | null> {
  return (await fileNameFailure(name))?.why ?? null;
}

/** {@link dumpNameFailure}'s reason alone. */
export async function dumpNameProblem(name: string, path: string): Promise<string | null> {
  return (await dumpNameFailure(name, path))?.why ?? null;
}
