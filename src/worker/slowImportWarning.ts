/**
 * A warning when importing task modules a client loads (`uploadFile`,
 * `loadTaskModules`) takes long: a module whose top-level `await` never
 * settles is never imported, the client's call never answers, and the loads
 * after it on that worker wait behind it (the `threads` executor loads one
 * list of modules at a time: `piscinaExecutor.ts`), all without a word
 * otherwise.
 */

import type { Logger } from "pino";

/** After how long an import still running is warned of, in ms. */
export const SLOW_IMPORT_WARNING_MS = 10_000;

/**
 * `work`, with a warning naming `modules` logged to `logger` if it has not
 * settled after `ms`; the work is still waited for.
 */
export async function warningIfSlow<T>(
  logger: Pick<Logger, "warn">,
  modules: readonly string[],
  work: Promise<T>,
  ms = SLOW_IMPORT_WARNING_MS,
): Promise<T> {
  const warning = setTimeout(() => {
    logger.warn(
      { modules },
      `importing task modules has not finished after ${ms / 1000} s (a top-level await that never settles?): ` +
        "the client's call waits for it, and so do the imports after it on this worker",
    );
  }, ms);
  try {
    return await work;
  } finally {
    clearTimeout(warning);
  }
}
