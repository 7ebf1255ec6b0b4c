/**
 * What a task runs: weft's stand-in for Dask's `run_spec`.
 *
 * The scheduler never looks inside `args` except to check that every task
 * reference in them is a declared dependency (see {@link undeclaredTaskRef}).
 */

/** A task's key: a string unique within the cluster, as in Dask (tuple keys are written as their `str()`). */
export type Key = string;

/** A reference to another task's result, standing in for that result inside {@link TaskSpec.args}. */
export interface TaskRef {
  /** The key of the task whose result replaces this reference when the task runs. */
  readonly __weftRef: Key;
}

/**
 * A task's run specification: a registered function's name and its arguments.
 * Arguments are JSON-like values (arrays and plain objects nest) in which any
 * {@link TaskRef} is replaced by the referenced task's result before the call.
 */
export interface TaskSpec {
  /** The name the function is registered under on every worker. */
  readonly fn: string;
  /** The positional arguments; may contain {@link TaskRef}s at any depth. */
  readonly args: readonly unknown[];
}

/** True iff `value` is a {@link TaskRef}: a plain object whose `__weftRef` is a string. */
export function isTaskRef(value: unknown): value is TaskRef {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { __weftRef?: unknown }).__weftRef === "string"
  );
}

/** A {@link TaskRef} to `key`. */
export function taskRef(key: Key): TaskRef {
  return { __weftRef: key };
}

/**
 * The key of the first {@link TaskRef} in `value` (arrays and plain objects
 * searched to any depth, in argument order) for which `stop` is true, or null.
 */
function findTaskRef(value: unknown, stop: (key: Key) => boolean): Key | null {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== "object" || v === null) continue;
    if (isTaskRef(v)) {
      if (stop(v.__weftRef)) return v.__weftRef;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    } else {
      const items = Object.values(v);
      for (let i = items.length - 1; i >= 0; i--) stack.push(items[i]);
    }
  }
  return null;
}

/**
 * Add to `into` the key of every {@link TaskRef} found in `value`, searching
 * arrays and plain objects to any depth. Returns `into`.
 */
export function collectTaskRefs(value: unknown, into: Set<Key>): Set<Key> {
  findTaskRef(value, (key) => {
    into.add(key);
    return false;
  });
  return into;
}

/**
 * The key of the first {@link TaskRef} in `value` that is not in `declared`,
 * or null. Builds no set: it runs on every task of every graph a scheduler
 * receives.
 */
export function undeclaredTaskRef(value: unknown, declared: readonly Key[]): Key | null {
  return findTaskRef(value, (key) => !declared.includes(key));
}

/**
 * Why `spec` is not a valid {@link TaskSpec}, or null when it is one:
 * `fn` must be a non-empty string and `args` an array.
 */
export function taskSpecProblem(spec: unknown): string | null {
  if (typeof spec !== "object" || spec === null) return "spec must be an object {fn, args}";
  const { fn, args } = spec as { fn?: unknown; args?: unknown };
  if (typeof fn !== "string" || fn.length === 0) return "spec.fn must be a non-empty string";
  if (!Array.isArray(args)) return "spec.args must be an array";
  return null;
}
