/**
 * A run's hooks as the simulated cluster calls them: what one throws is the
 * run's failure (`raised`, naming the hook), reported in its result as the
 * state machines' throws are, rather than an exception escaping `run()`.
 */

import { asError } from "../util/asError.ts";
import { SimFailure } from "./failure.ts";
import type { SimHooks } from "./hooks.ts";

const HOOK_NAMES = [
  "schedulerStimulus",
  "schedulerMessage",
  "workerEvent",
  "taskValue",
  "afterScheduler",
] as const;

/** A SimFailure thrown on purpose stays one (asking `instanceof` of a Proxy may throw). */
function isSimFailure(e: unknown): boolean {
  try {
    return e instanceof SimFailure;
  } catch {
    return false;
  }
}

/** `hooks`, each of whose throws becomes a `raised` {@link SimFailure} naming it. */
export function guardedHooks(hooks: SimHooks): SimHooks {
  const guarded: Record<string, unknown> = {};
  for (const name of HOOK_NAMES) {
    const fn = hooks[name] as ((...args: unknown[]) => unknown) | undefined;
    if (typeof fn !== "function") continue;
    guarded[name] = (...args: unknown[]) => {
      try {
        return fn.apply(hooks, args);
      } catch (e) {
        if (isSimFailure(e)) throw e;
        // The error, not what was thrown: the result's details read its cause chain.
        const err = asError(e);
        throw new SimFailure("raised", `the ${name} hook threw: ${err.message}`, "", {
          cause: err,
        });
      }
    };
  }
  return guarded as SimHooks;
}
