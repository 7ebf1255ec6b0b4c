/**
 * Files a command or a client writes once its work is done (a profile, a cluster
 * dump, a task stream, a performance report), written whole or not at all.
 * `writeFile` truncates the file first, then writes: a disk that filled up midway
 * left the first 8 KiB of a profile (JSON no tool could open) or an empty task
 * stream, in place of the file that was there before.
 */

import type { Stats } from "node:fs";
import {
  chmod,
  chown,
  lstat,
  readlink,
  realpath,
  rename,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { hiddenName, removeHiddenLeftovers } from "./hiddenLeftovers.ts";
import { partialFileEnded, partialFileStarted } from "./partialFiles.ts";
import { deviceProblem } from "./regularFile.ts";

/**
 * Write `data` to `given` (a path or a file URL) whole: into a hidden file beside
 * it, then renamed over it, so that a failed write (a full disk) leaves the file as
 * it was, or no file, and never a part. A symlink is followed (the file it names is replaced, the link
 * kept); a device or a FIFO (`/dev/stdout`) cannot be replaced, and is written in
 * place, as is a file whose directory does not let a file be made beside it, and
 * one that cannot be replaced as the same file: of several hard links, of an owner
 * this process cannot give the new one, a mount point (a file bind-mounted into a
 * container), in a sticky directory (/tmp) another user's. writeFile wrote them all.
 */
export async function writeWholeFile(
  given: string | URL,
  data: string | Uint8Array,
): Promise<void> {
  await writeWhole(given, data, true);
}

/**
 * {@link writeWholeFile}, but never in place, for a file another process polls and
 * must never find half written (a scheduler file, read by workers as it comes):
 * what writeWholeFile writes in place (a file of several links, a link to nothing) is
 * replaced by the file renamed over the path, and where no file can be made beside
 * it, or renamed over it (a directory closed to new files, a mount point), or the
 * path is a device, a FIFO or a socket, it rejects (the last with the code
 * `ENOTREGULAR` and the message "it is a FIFO (named pipe), not a regular file"). A
 * symlink is followed, as Dask's `open(path, "w")` follows it: the file it names (made
 * if it names nothing yet) is replaced, by a file renamed over it beside it, and the
 * link is kept, a link to a directory refused ({@link followedPath}). A file whose
 * owner this process cannot give the new one is replaced as this process's.
 */
export async function replaceWholeFile(
  given: string | URL,
  data: string | Uint8Array,
): Promise<void> {
  await writeWhole(given, data, false);
}

/** What the file replaced keeps: its permissions and its owner. */
interface KeptStatus {
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
}

/** Where a whole file is renamed to, and what of the file there it keeps. */
interface Target {
  readonly path: string;
  readonly kept: KeptStatus | null;
}

/** {@link writeWholeFile}, or {@link replaceWholeFile} unless `inPlace`. */
async function writeWhole(
  given: string | URL,
  data: string | Uint8Array,
  inPlace: boolean,
): Promise<void> {
  const path = typeof given === "string" ? given : fileURLToPath(given);
  // Not in place, a link to nothing is followed too, to the file it names.
  const end = inPlace ? path : await followedPath(path);
  let target = await replaceableTarget(end);
  if (target === null) {
    if (inPlace) {
      await writeFile(path, data);
      return;
    }
    // Renamed over, a device would be gone (root's rename replaces /dev/null).
    const device = await deviceProblem(end);
    if (device !== null) throw Object.assign(new Error(device), { code: "ENOTREGULAR" });
    target = { path: resolve(end), kept: null };
  }
  const partial = join(dirname(target.path), hiddenName(target.path, "partial"));
  partialFileStarted(partial);
  let renamed: boolean;
  try {
    renamed = await writeWholePartial(partial, path, target, data, inPlace);
  } finally {
    partialFileEnded(partial);
  }
  if (renamed) await removeHiddenLeftovers(target.path, "partial", isStalePartial);
}

/**
 * How much older than the file just written a partial file beside it must be to
 * be taken for one a process killed mid-write (`kill -9`) left: a live writer's
 * is written to until it is renamed, a few ms later, unless its process stalls.
 */
const STALE_PARTIAL_MS = 60_000;

/** A partial file of the same target last written a minute or more before this one was. */
function isStalePartial(partial: Stats, written: Stats): boolean {
  return partial.mtimeMs < written.mtimeMs - STALE_PARTIAL_MS;
}

/**
 * Write `data` into `partial`, then rename it over `target`: see {@link writeWholeFile}.
 * False when it was written in place instead.
 */
async function writeWholePartial(
  partial: string,
  path: string,
  target: Target,
  data: string | Uint8Array,
  inPlace: boolean,
): Promise<boolean> {
  try {
    await writeFile(partial, data, { flag: "wx" });
  } catch (err) {
    await removed(partial);
    // A directory closed to new files (a file there may still be open to writes):
    // as writeFile does, and with its error.
    if (inPlace && isPermissionError(err)) {
      await writeFile(path, data);
      return false;
    }
    throw naming(err, partial, path);
  }
  try {
    if (target.kept !== null) await keep(partial, target.kept, inPlace);
    await rename(partial, target.path);
  } catch (err) {
    await removed(partial);
    // An owner not ours to give (EPERM), another user's file in a sticky directory
    // (EPERM), a mount point (EBUSY): the file can only be written in place, as
    // writeFile did, and with its error.
    if (inPlace && (isPermissionError(err) || isMountPointError(err))) {
      await writeFile(path, data);
      return false;
    }
    throw naming(err, partial, path);
  }
  return true;
}

/**
 * Give `partial` the permissions (a profile readable by its owner alone) and the
 * owner (root's would lock its user out of a file of mode 0600) of the file it
 * replaces. An owner not this process's to give is kept only by a write in place:
 * `inPlace` false, the file is a new one of this process's, its permissions too (the
 * old owner's 0600 would lock that owner out of it).
 */
async function keep(partial: string, kept: KeptStatus, inPlace: boolean): Promise<void> {
  const made = await stat(partial);
  if (made.uid !== kept.uid || made.gid !== kept.gid) {
    try {
      await chown(partial, kept.uid, kept.gid);
    } catch (err) {
      if (inPlace || !isPermissionError(err)) throw err;
      return;
    }
  }
  // After chown, which clears the set-user-ID and set-group-ID bits.
  await chmod(partial, kept.mode);
}

/** Removes the hidden file, whose own error (none there) would hide the write's. */
async function removed(partial: string): Promise<void> {
  await rm(partial, { force: true }).catch(() => {});
}

/** `err`, saying `path` where it says `partial`, which the caller never named. */
function naming(err: unknown, partial: string, path: string): unknown {
  if (err instanceof Error) {
    err.message = err.message.replaceAll(partial, path);
    const e = err as NodeJS.ErrnoException;
    if (e.path === partial) e.path = path;
  }
  return err;
}

/**
 * Where `path` leads, if a file can be renamed over it there: the regular file it
 * names (through symlinks) and its permissions, or the path itself with no
 * permissions to keep when nothing is there yet; null for a device, a FIFO, a
 * socket, a link to nothing or a name under /dev or /proc, written in place.
 */
async function replaceableTarget(path: string): Promise<Target | null> {
  // /dev/stdout leads to the file a shell redirected the output to: replaced, the
  // process would go on writing its output to the file unlinked.
  if (/^\/(dev|proc)\//.test(resolve(path))) return null;
  let real: string;
  try {
    real = await realpath(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") return null;
    // Nothing there, or a link to nothing (writeFile makes its target).
    return (await isSymlink(path)) ? null : { path: resolve(path), kept: null };
  }
  const s = await stat(real);
  // A file of several names: renamed over, this one would part from the others.
  if (!s.isFile() || s.nlink > 1) return null;
  return { path: real, kept: { mode: s.mode & 0o7777, uid: s.uid, gid: s.gid } };
}

/**
 * The path `path` leads to through symlinks, followed one by one so that a link to
 * nothing leads to the name it gives (where `open(path, "w")` makes its file), and
 * `path` itself when it is no link. A link is followed into /proc, and no further:
 * /dev/stdout leads to /proc/self/fd/1, not to the file a shell redirected the output
 * to (where no file can be made beside it, not to replace /dev/stdout itself). Other
 * names under /dev are followed as any (/dev/shm is a file system for files).
 */
export async function followedPath(path: string): Promise<string> {
  let at = resolve(path);
  // One look more than the links followed: the last shows whether a 40th led to a file.
  for (let looks = 0; looks <= MAX_SYMLINK_HOPS; looks++) {
    if (inProc(at)) return at;
    let to: string;
    try {
      to = await readlink(at);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // No link (EINVAL), or nothing there (ENOENT, ENOTDIR): the path's end.
      if (code === "EINVAL" || code === "ENOENT" || code === "ENOTDIR") return at;
      throw err;
    }
    // From the directory the link is really in: `..` in its target goes up from there,
    // not from a symlinked directory's name in the path.
    const dir = await realpath(dirname(at)).catch(() => dirname(at));
    // /dev/fd/1: read through /proc/self/fd, its target is the file fd 1 has open.
    if (inProc(dir)) return join(dir, basename(at));
    at = resolve(dir, to);
  }
  throw Object.assign(new Error(`too many levels of symbolic links at ${path}`), {
    code: "ELOOP",
    path,
  });
}

/** Whether `path` names something under /proc, whose links are no user's. */
function inProc(path: string): boolean {
  return path.startsWith("/proc/");
}

/** Linux's limit (MAXSYMLINKS) on the links a path is followed through. */
const MAX_SYMLINK_HOPS = 40;

/** Whether `path` is a symlink (to a file or to nothing). */
async function isSymlink(path: string): Promise<boolean> {
  return lstat(path).then(
    (s) => s.isSymbolicLink(),
    () => false,
  );
}

/** A rename refused because the file is a mount point, or on another file system. */
function isMountPointError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "EBUSY" || code === "EXDEV";
}

function isPermissionError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "EACCES" || code === "EPERM";
}
