/**
 * Directories a process makes for itself under a base directory (spilled
 * values, uploaded files), named after it (`<prefix>-<pid>-…`) so that the
 * next process to make one there removes those of processes that died before
 * they could remove their own.
 */

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

/** A new directory `<prefix>-<pid>-…` in `base`, once the directories of dead processes there are removed. */
export function scratchDirectoryIn(base: string, prefix: string): string {
  const mine = new RegExp(`^${prefix}-(\\d+)-`);
  for (const name of readdirSync(base)) {
    const pid = Number(mine.exec(name)?.[1] ?? Number.NaN);
    if (!Number.isSafeInteger(pid) || pid === process.pid || isRunning(pid)) continue;
    rmSync(join(base, name), { recursive: true, force: true });
  }
  return mkdtempSync(join(base, `${prefix}-${process.pid}-`));
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
