/**
 * Checks of the files a command writes once its work is done (a profile, a
 * dump, a task stream), made before the work: a path that cannot be written
 * is otherwise found out only at the end, when the minutes spent are lost.
 */

import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { dirname, resolve, sep } from "node:path";

function codeOf(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}

/** Why no file can be made in the directory `path` would be in, or null. */
export async function directoryProblem(path: string): Promise<string | null> {
  const dir = dirname(resolve(path));
  try {
    if (!(await stat(dir)).isDirectory()) return `${dir} is not a directory`;
    await access(dir, constants.W_OK);
    return null;
  } catch (err) {
    const code = codeOf(err);
    if (code === "ENOENT") return `no such directory: ${dir}`;
    if (code === "ENOTDIR") return `${dir} is not a directory`;
    return `cannot write in ${dir} (${code})`;
  }
}

/** Why `path` cannot be written (made, or replaced if it is a file), or null. */
export async function outputProblem(path: string): Promise<string | null> {
  try {
    if ((await stat(path)).isDirectory()) return "it is a directory";
    await access(path, constants.W_OK);
    return null;
  } catch (err) {
    const code = codeOf(err);
    if (code === "ENOENT") return directoryProblem(path);
    if (code === "ENOTDIR") return `${dirname(resolve(path))} is not a directory`;
    return `cannot write it (${code})`;
  }
}

/**
 * Why `name`, a file name to which a format's extension may still be added (a
 * cluster dump's), cannot be one: it is empty, a directory, or ends as one does.
 * Adding the extension would write the hidden `.msgpack.gz` here, `DIR.msgpack.gz`
 * beside the directory, or the hidden `DIR/.msgpack.gz` in it, none where the user
 * pointed.
 */
export async function fileNameProblem(name: string): Promise<string | null> {
  if (name === "") return "the name is empty";
  if (name.endsWith("/") || name.endsWith(sep)) return "it names a directory (it ends with /)";
  try {
    return (await stat(name)).isDirectory() ? "it is a directory" : null;
  } catch {
    return null; // a name that does not exist yet: the other checks say what else is wrong
  }
}

/**
 * Why a cluster dump cannot be written under `name`, which the format's extension
 * made `path`: the name cannot be one ({@link fileNameProblem}), its directory takes
 * no file, or the file there cannot be replaced (said of `path` when the extension
 * was added); or null. Asked before the cluster is asked for its state, by `weft
 * dump` and `client.dumpClusterState` alike.
 */
export async function dumpNameProblem(name: string, path: string): Promise<string | null> {
  const inDirectory = (await fileNameProblem(name)) ?? (await directoryProblem(name));
  if (inDirectory !== null) return inDirectory;
  const asFile = await outputProblem(path);
  return asFile === null || path === name ? asFile : `${path}: ${asFile}`;
}
