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
 * How deeply arrays and objects may nest in a task's arguments: what the client
 * accepts, and what the scheduler accepts from any client (deeper ones could not
 * be sent on to a worker: the wire codec refuses 2,000 levels, message included).
 */
export const MAX_ARG_DEPTH = 1000;

/** True for an object made by `{...}` or `Object.create(null)`. */
function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Found nesting deeper than {@link MAX_ARG_DEPTH} (from {@link findTaskRef}). */
const TOO_DEEP = Symbol("too deep");

/**
 * The key of the first {@link TaskRef} in `value` (arrays and plain objects
 * searched to any depth, in argument order) for which `stop` is true, null if
 * none, or {@link TOO_DEEP} if `value` nests deeper than {@link MAX_ARG_DEPTH}.
 */
function findTaskRef(value: unknown, stop: (key: Key) => boolean): Key | null | typeof TOO_DEEP {
  const stack: unknown[] = [value];
  const depths: number[] = [0];
  // Inside a Map or a Set: references are not substituted there (resolveArgs), but the
  // nesting counts, as the wire encodes it level by level all the same.
  const opaque: boolean[] = [false];
  while (stack.length > 0) {
    const v = stack.pop();
    const depth = depths.pop() as number;
    const inOpaque = opaque.pop() as boolean;
    if (typeof v !== "object" || v === null) continue;
    if (!inOpaque && isTaskRef(v)) {
      if (stop(v.__weftRef)) return v.__weftRef;
      continue;
    }
    if (depth >= MAX_ARG_DEPTH) return TOO_DEEP;
    // Only arrays, plain objects, Maps and Sets are walked: any other object (a typed
    // array, a Date) is a leaf, and walking one element by element could take seconds
    // or throw.
    let items: readonly unknown[];
    let itemsOpaque = inOpaque;
    if (Array.isArray(v)) items = v;
    else if (isPlainObject(v)) items = Object.values(v);
    else if (v instanceof Map) {
      items = [...v].flat();
      itemsOpaque = true;
    } else if (v instanceof Set) {
      items = [...v];
      itemsOpaque = true;
    } else continue;
    for (let i = items.length - 1; i >= 0; i--) {
      stack.push(items[i]);
      depths.push(depth + 1);
      opaque.push(itemsOpaque);
    }
  }
  return null;
}

/**
 * Add to `into` the key of every {@link TaskRef} found in `value`, searching
 * arrays and plain objects to any depth. Returns `into`.
 */
export function collectTaskRefs(value: unknown, into: Set<Key>): Set<Key> {
  // Depth is not checked here: the scheduler has refused a graph nested too deeply.
  findTaskRef(value, (key) => {
    into.add(key);
    return false;
  });
  return into;
}

/**
 * Why the arguments `args` of a task declaring dependencies `declared` are not
 * acceptable, or null: nested deeper than {@link MAX_ARG_DEPTH}, or a task
 * reference to a key not declared.
 */
export function taskArgsProblem(args: readonly unknown[], declared: readonly Key[]): string | null {
  const found = findTaskRef(args, undeclared(declared));
  if (found === TOO_DEEP)
    return `has arguments nested deeper than ${MAX_ARG_DEPTH} arrays, objects, Maps or Sets`;
  if (found !== null)
    return `refers to '${found}' in its arguments but does not list it as a dependency`;
  return null;
}

/** True for a key not in `declared` (searched through a set when it is long: a task may have 50,000). */
function undeclared(declared: readonly Key[]): (key: Key) => boolean {
  if (declared.length <= 16) return (key) => !declared.includes(key);
  const set = new Set(declared);
  return (key) => !set.has(key);
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
