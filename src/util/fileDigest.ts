/** A digest of a module file's bytes: to tell whether it changed since it was imported, or failed to be. */

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** A digest of the bytes of the file at the file URL `url` (its query ignored), or null (not a file, not readable). */
export function fileDigest(url: string): string | null {
  try {
    return createHash("sha256")
      .update(readFileSync(fileURLToPath(url)))
      .digest("hex");
  } catch {
    return null;
  }
}
