/** A digest of a module file's bytes: to tell whether it changed since it was imported, or failed to be. */

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { regularFileSizeSync } from "./regularFile.ts";

/**
 * A digest of the bytes of the file at the file URL `url` (its query ignored),
 * or null (not a regular file, not readable). A device or a FIFO is not read:
 * a link to `/dev/zero` was read until memory ran out, and a FIFO blocked the
 * thread (a worker's event loop) until some process wrote to it.
 */
export function fileDigest(url: string): string | null {
  try {
    const path = fileURLToPath(url);
    regularFileSizeSync(path);
    return createHash("sha256").update(readFileSync(path)).digest("hex");
  } catch {
    return null;
  }
}
