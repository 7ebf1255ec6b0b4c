/**
 * The hidden files a write or a removal of a file makes beside it for a moment,
 * `.NAME.<uuid>.partial` (the whole-file writes: wholeFile.ts) and
 * `.NAME.<uuid>.removed` (the scheduler file's removal: schedulerFile.ts), and
 * their removal once a process killed meanwhile (`kill -9`, a node out of
 * memory) left them there for good: a later write of the same file removes
 * those its caller judges stale.
 */

import { randomUUID } from "node:crypto";
import type { Stats } from "node:fs";
import { lstat, readdir, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** What a hidden file is for: the name it ends with. */
export type HiddenKind = "partial" | "removed";

/** How much of the file's name its hidden name keeps (so that a name near 255 bytes fits). */
const HIDDEN_BASENAME_CHARS = 40;

/** What follows the file's name in a hidden name: a UUID, then the kind. */
const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

/** A hidden name of `kind` for the file at `path`, unique to this call (its directory not included). */
export function hiddenName(path: string, kind: HiddenKind): string {
  return `.${basename(path).slice(0, HIDDEN_BASENAME_CHARS)}.${randomUUID()}.${kind}`;
}

/**
 * Remove the hidden files of `kind` beside the file at `path`, just written,
 * that `isStale` judges left by a process gone, given their status and the
 * file's. Not for a name longer than the hidden name keeps, whose leftovers
 * cannot be told from those of another file whose name starts alike (nor for
 * one as long as it keeps, which a longer name is cut to). Best effort: a
 * directory that cannot be listed, or a leftover that cannot be removed, is left.
 */
export async function removeHiddenLeftovers(
  path: string,
  kind: HiddenKind,
  isStale: (leftover: Stats, written: Stats) => boolean,
): Promise<void> {
  const name = basename(path);
  if (name.length >= HIDDEN_BASENAME_CHARS) return;
  const dir = dirname(path);
  const ofFile = new RegExp(`^${escaped(`.${name}.`)}${UUID}\\.${kind}$`);
  try {
    const written = await stat(path);
    for (const hidden of await readdir(dir)) {
      if (!ofFile.test(hidden)) continue;
      const leftover = join(dir, hidden);
      const status = await lstat(leftover).catch(() => null);
      if (status?.isFile() && isStale(status, written)) await rm(leftover, { force: true });
    }
  } catch {
    // Left: best effort.
  }
}

/** `text` matched literally in a RegExp. */
function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
