/**
 * A task module for the executor tests that fails to load while the file named
 * by its URL's `flag` parameter exists (`testTasksImportFails.ts?flag=/tmp/…`):
 * a pool thread started meanwhile cannot import it.
 */

import { existsSync } from "node:fs";
import { defineTask } from "./taskRegistry.ts";

const flag = new URL(import.meta.url).searchParams.get("flag");
if (flag !== null && existsSync(flag)) {
  throw new Error(`testTasksImportFails: refusing to load while ${flag} exists`);
}

defineTask("inc", (x: number) => x + 1);
/** Ends its pool thread. */
defineTask("exitThread", () => {
  process.exit(3);
});
