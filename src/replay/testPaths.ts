import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** `../shared/<sub>/<name>` from the repository root (tests only). */
export function sharedPath(sub: "dumps" | "conformance" | "bench", name: string): string {
  return fileURLToPath(new URL(`../../../shared/${sub}/${name}`, import.meta.url));
}

/** A fresh directory under `os.tmpdir()` (tests only). */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `weft-${prefix}-`));
}
