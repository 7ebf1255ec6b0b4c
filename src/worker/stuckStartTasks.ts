/**
 * Task functions for the tests of a worker closed while it starts: a worker
 * plugin whose setup never settles. What its hooks did is kept on
 * `globalThis`, shared by every copy of this module the process loads (the
 * test's and the worker's import of it).
 */

import { defineTask } from "./taskRegistry.ts";

/** Where the plugin's hooks log, on `globalThis`. */
const LOG_KEY = Symbol.for("weft.test.stuckStartLog");

/** What the plugins of this module did, in order. */
export function stuckStartLog(): string[] {
  const g = globalThis as { [LOG_KEY]?: string[] };
  g[LOG_KEY] ??= [];
  return g[LOG_KEY];
}

/** A worker plugin whose setup never settles; its teardown is logged. */
defineTask("stuckSetupPlugin", (label: string) => ({
  setup() {
    stuckStartLog().push(`${label} setup`);
    return new Promise(() => {});
  },
  teardown() {
    stuckStartLog().push(`${label} teardown`);
  },
}));

/** A worker plugin set up at once, logged: one the register reply lists after a stuck one. */
defineTask("quickPlugin", (label: string) => ({
  setup() {
    stuckStartLog().push(`${label} setup`);
  },
}));

/** A worker plugin whose setup takes `ms`: one a start's deadline cuts short. Its teardown is logged. */
defineTask("slowSetupPlugin", (label: string, ms: number) => ({
  async setup() {
    stuckStartLog().push(`${label} setup`);
    await new Promise((resolve) => setTimeout(resolve, ms));
  },
  teardown() {
    stuckStartLog().push(`${label} teardown`);
  },
}));
