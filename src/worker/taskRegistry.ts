/**
 * The functions tasks run, registered by name. Every worker (and every thread
 * of a worker's pool) imports the same task modules, so a name means the same
 * function everywhere:
 *
 * ```ts
 * // tasks.ts
 * export const inc = defineTask("inc", (x: number) => x + 1);
 * ```
 *
 * A task's `TaskSpec` names the function (`{fn: "inc", args: [1]}`).
 */

import { showValue } from "../util/showValue.ts";

/**
 * A function a task can run: any parameters, any (or a promised) result.
 * (`never[]` parameters accept every function type without `any`.)
 */
export type TaskFunction = (...args: never[]) => unknown;

/** A registered task function, returned by {@link defineTask}. */
export interface TaskDefinition<F extends TaskFunction = TaskFunction> {
  /** The name tasks refer to it by. */
  readonly name: string;
  /** The function. */
  readonly fn: F;
}

/** The function named in a task spec is not registered here. */
export class UnknownTaskFunctionError extends Error {
  override name = "UnknownTaskFunctionError";
}

/**
 * One registry per thread, kept on `globalThis`: a task module may reach this
 * file through another copy of it (weft's sources and its build, or its ESM
 * and a CommonJS load of the same module), and must still register where the
 * worker looks.
 */
const REGISTRY_KEY = Symbol.for("weft.taskRegistry");
const registry: Map<string, TaskDefinition> = ((globalThis as Record<symbol, unknown>)[
  REGISTRY_KEY
] ??= new Map<string, TaskDefinition>()) as Map<string, TaskDefinition>;

/**
 * Register `fn` under `name`, process- (thread-) wide. Throws if `name` is
 * empty or already taken, or `fn` is not a function.
 */
export function defineTask<F extends TaskFunction>(name: string, fn: F): TaskDefinition<F> {
  if (typeof name !== "string" || name.length === 0) {
    throw new TypeError(`defineTask: the name must be a non-empty string, got ${showValue(name)}`);
  }
  if (typeof fn !== "function") {
    throw new TypeError(
      `defineTask(${JSON.stringify(name)}): expected a function, got ${typeof fn}`,
    );
  }
  if (registry.has(name)) {
    throw new Error(`defineTask: a task function named ${JSON.stringify(name)} is already defined`);
  }
  const def: TaskDefinition<F> = Object.freeze({ name, fn });
  registry.set(name, def);
  return def;
}

/** The function registered under `name`, or undefined. */
export function getTaskFunction(name: string): TaskFunction | undefined {
  return registry.get(name)?.fn;
}

/** The function registered under `name`; throws an {@link UnknownTaskFunctionError} naming what is registered. */
export function lookupTaskFunction(name: string): TaskFunction {
  const def = registry.get(name);
  if (def !== undefined) return def.fn;
  const known = [...registry.keys()].sort();
  const shown = known.length > 20 ? `${known.slice(0, 20).join(", ")}, …` : known.join(", ");
  throw new UnknownTaskFunctionError(
    `unknown task function ${JSON.stringify(name)}: no task module loaded by this worker defines it` +
      (known.length > 0 ? ` (defined: ${shown})` : " (no task functions are defined)"),
  );
}

/** The names of every registered function, sorted. */
export function taskFunctionNames(): string[] {
  return [...registry.keys()].sort();
}

/**
 * Unregister `names`: the functions a task module defined before its import
 * failed (see `importTaskModule.ts`), which no task is to run.
 */
export function forgetTaskFunctions(names: Iterable<string>): void {
  for (const name of names) registry.delete(name);
}
