/**
 * Directories a process makes for itself under a base directory (spilled
 * values, uploaded files), named after it (`<prefix>-<pid>-<host>-…`) so that
 * the next process to make one there removes those of processes that died
 * before they could remove their own.
 *
 * Only those of this host (and, on Linux, of this PID namespace: containers
 * sharing a volume see each other's pids as dead) are removed: a base shared
 * between machines (a network file system, a volume of several containers)
 * holds the live directories of processes this one cannot see.
 */

import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

/** This process's host and PID namespace, as a directory name may hold it. */
export function hostTag(): string {
  let namespace = "";
  try {
    // "pid:[4026531836]": processes of another namespace are not this one's to judge.
    namespace = `_${readlinkSync("/proc/self/ns/pid").replace(/\D/g, "")}`;
  } catch {
    // not Linux: the host name alone
  }
  return `${hostname().replace(/[^A-Za-z0-9.]/g, "_")}${namespace}`;
}

/**
 * A new directory `<prefix>-<pid>-<host>-…` in `base`, once the directories of
 * dead processes of this host there are removed (and those of the older form
 * `<prefix>-<pid>-XXXXXX`, which name no host).
 */
export function scratchDirectoryIn(base: string, prefix: string): string {
  const tag = hostTag();
  const named = new RegExp(`^${prefix}-(\\d+)-(.+)$`);
  for (const name of readdirSync(base)) {
    const m = named.exec(name);
    if (m === null) continue;
    const pid = Number(m[1]);
    // mkdtemp's characters end the name; before them, after a "-", the host's tag
    // (none in the older form).
    const rest = m[2] as string;
    const dash = rest.lastIndexOf("-");
    const ofThisHost = dash < 0 || rest.slice(0, dash) === tag;
    if (!ofThisHost || !Number.isSafeInteger(pid) || pid === process.pid || isRunning(pid)) {
      continue;
    }
    rmSync(join(base, name), { recursive: true, force: true });
  }
  return mkdtempSync(join(base, `${prefix}-${process.pid}-${tag}-`));
}

/** True if a process `pid` runs (one of another user's counts: it may not be signalled). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
