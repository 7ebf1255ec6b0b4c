/**
 * The built-in nanny plugin `environ` (Dask's `Environ`): environment
 * variables for the worker processes of every nanny, set in `nanny.env`,
 * then the worker restarted so that a fresh process has them. Built into the
 * nanny: it needs no task module.
 */

import { showValue } from "../util/showValue.ts";
import type { Nanny, NannyPluginHooks } from "./nannyPlugins.ts";
import type { TaskDefinition } from "./taskRegistry.ts";

/** The name of the built-in factory of {@link environ}. */
const ENVIRON_FN = "weft.environ";

/** Why `vars` is not a set of environment variables (`{NAME: "value"}`), or null. */
export function environVarsProblem(vars: unknown): string | null {
  if (
    typeof vars !== "object" ||
    vars === null ||
    Object.getPrototypeOf(vars) !== Object.prototype
  ) {
    return `expected the variables as an object {NAME: "value"}, got ${showValue(vars)}`;
  }
  for (const [name, value] of Object.entries(vars)) {
    if (name === "" || name.includes("=") || name.includes("\0")) {
      return `${JSON.stringify(name)} is not an environment variable's name`;
    }
    if (typeof value !== "string" || value.includes("\0")) {
      return `the value of ${name} must be a string without NUL characters, got ${showValue(value)}`;
    }
  }
  return null;
}

/**
 * The plugin: its setup sets `vars` in `nanny.env`, its teardown (the plugin
 * removed or replaced) takes back those still as it set them, for the worker
 * processes started after.
 */
function environPlugin(vars: Readonly<Record<string, string>>): NannyPluginHooks {
  const problem = environVarsProblem(vars);
  if (problem !== null) throw new TypeError(`environ: ${problem}`);
  const given = { ...vars };
  return {
    restart: true,
    setup(nanny: Nanny) {
      Object.assign(nanny.env, given);
    },
    teardown(nanny: Nanny) {
      for (const [name, value] of Object.entries(given)) {
        if (nanny.env[name] === value) delete nanny.env[name];
      }
    },
  };
}

/**
 * Dask's `Environ` nanny plugin: `client.registerNannyPlugin(environ, { args:
 * [{ OMP_NUM_THREADS: "1" }] })` has every nanny (`weft worker --nanny`) set
 * these environment variables for its worker processes, and restart its
 * worker for them to take effect. Built into the nanny (no task module
 * defines it: it is not a task to submit).
 */
export const environ: TaskDefinition<(vars: Readonly<Record<string, string>>) => NannyPluginHooks> =
  Object.freeze({ name: ENVIRON_FN, fn: environPlugin });

/** The nanny plugin factories every nanny has, by task function name. */
export const BUILT_IN_NANNY_PLUGINS: ReadonlyMap<string, (...args: readonly unknown[]) => unknown> =
  new Map([[ENVIRON_FN, (...args: readonly unknown[]) => environArgs(args)]]);

/** The environ plugin of `args`, which must be `[vars]`. */
function environArgs(args: readonly unknown[]): NannyPluginHooks {
  if (args.length !== 1) {
    throw new TypeError(`environ: expected one argument, the variables, got ${args.length}`);
  }
  return environPlugin(args[0] as Record<string, string>);
}

/** Why `args` are not those of the built-in factory `fn`, or null (not a built-in one included). */
export function builtInArgsProblem(fn: string, args: readonly unknown[]): string | null {
  if (fn !== ENVIRON_FN) return null;
  if (args.length !== 1) return `environ takes one argument, the variables, got ${args.length}`;
  return environVarsProblem(args[0]);
}
