/**
 * What `submit`, `map`, `compute` and `get` are given, made into the tasks of an
 * `update-graph`: the options of a submission, their checks, a submitted task's
 * message, and the keys wanted of a graph. Apart from the client: these are
 * pure checks and shapes, the client keeps the bookkeeping of what it sent.
 */

import type { GraphTask } from "../protocol/messagesClient.ts";
import type { Resources } from "../protocol/messagesWorker.ts";
import { checkKnownOptions, type OptionNames } from "../util/knownOptions.ts";
import { showValue } from "../util/showValue.ts";
import {
  checkOptionalBoolean,
  itemsOf,
  type NullsAsDefaults,
  nullsAsDefaults,
  optionsOf,
} from "./argChecks.ts";
import { refuseKeysGivenPositionally } from "./daskPositional.ts";
import {
  type BuiltGraph,
  GRAPH_NULL_DEFAULTS,
  type GraphOptions,
  setTaskOptions,
  taskOptionsProblem,
} from "./graph.ts";
import { keyProblem } from "./taskArgs.ts";

/** Options of one submitted task (`workers`, `allowOtherWorkers`: see {@link GraphOptions}). */
export interface SubmitOptions extends Pick<GraphOptions, "workers" | "allowOtherWorkers"> {
  /**
   * The task's key. Default (or null): derived from the function and
   * arguments (with `pure: false`, `<name>-<client id>-<counter>`).
   */
  readonly key?: string | null;
  /**
   * The function is pure: the same arguments give the same key, so a second
   * submission reuses the first (Dask's `pure=True`). Default true, but for an
   * actor's task (`actor: true`), each of which makes an object of its own (as
   * Dask's `pure` defaults to `not actor`).
   */
  readonly pure?: boolean;
  /** Re-run the task this many times after it raises. Default (or null) 0. */
  readonly retries?: number | null;
  /** `{resource: amount}` a worker must supply to run it. Default (or null) none. */
  readonly resources?: Resources | null;
  /** Higher runs earlier. Default 0. */
  readonly priority?: number;
  /**
   * The task makes an actor (Dask's `actor=True`): the object it returns stays
   * on the worker that ran it, and the future's result is an {@link Actor}
   * handle calling its methods there. Each submission makes a new object,
   * under a fresh key, unless `pure: true`. Default false.
   */
  readonly actor?: boolean;
}

/** Options of {@link Client.compute} and {@link Client.get}. */
export interface ComputeOptions extends GraphOptions {
  /** The keys wanted (an array or another iterable). Default: the tasks no other task depends on. */
  readonly keys?: Iterable<string>;
}

/** Every option of {@link SubmitOptions}: others are refused. */
const SUBMIT_OPTIONS: OptionNames<SubmitOptions> = {
  key: true,
  pure: true,
  retries: true,
  resources: true,
  priority: true,
  actor: true,
  workers: true,
  allowOtherWorkers: true,
};

/** Every option of {@link ComputeOptions}: others are refused. */
const COMPUTE_OPTIONS: OptionNames<ComputeOptions> = {
  keys: true,
  retries: true,
  resources: true,
  priority: true,
  workers: true,
  allowOtherWorkers: true,
};

/** Refuse options of `compute` or `get` (`op`) that are not an object or name no option. */
export function checkComputeOptions(op: string, options: ComputeOptions): void {
  refuseKeysGivenPositionally(op, options);
  checkKnownOptions(op, optionsOf(op, options), COMPUTE_OPTIONS);
}

/** The options of {@link SubmitOptions} that null leaves at their default, as Dask's `None`. */
const SUBMIT_NULL_DEFAULTS = [...GRAPH_NULL_DEFAULTS, "key"] as const;

/** {@link SubmitOptions} once checked, null taken for the default. */
export type GivenSubmitOptions = NullsAsDefaults<
  SubmitOptions,
  (typeof SUBMIT_NULL_DEFAULTS)[number]
>;

/**
 * Check the options every task of a submission shares; errors name `op`.
 * Returns them with the nulls of options Dask defaults to `None` left out.
 */
export function checkSubmitOptions(op: string, given: SubmitOptions): GivenSubmitOptions {
  // submitWith's are its first argument, required; map's are optional, defaulted to {}.
  optionsOf(op, given, true);
  checkKnownOptions(op, given, SUBMIT_OPTIONS);
  const options = nullsAsDefaults(given, SUBMIT_NULL_DEFAULTS);
  const key: unknown = options.key;
  if (key !== undefined) {
    if (typeof key !== "string" || key === "") {
      throw new TypeError(`${op}: key must be a non-empty string, got ${showValue(key)}`);
    }
    const problem = keyProblem(key);
    if (problem !== null) throw new TypeError(`${op}: key ${JSON.stringify(key)} ${problem}`);
  }
  const problem = taskOptionsProblem(options);
  if (problem !== null) throw new RangeError(`${op}: ${problem}`);
  checkOptionalBoolean(op, "pure", options.pure);
  if (options.actor !== undefined && typeof options.actor !== "boolean") {
    throw new TypeError(`${op}: actor must be a boolean, got ${showValue(options.actor)}`);
  }
  return options;
}

/** The dependencies of every task without any (messages are never modified). */
const NO_DEPENDENCIES: readonly string[] = Object.freeze([]);

/** The message of a task submitted as `fn(...args)`, with `deps` its dependencies' keys. */
export function graphTask(
  fn: string,
  args: unknown[],
  deps: ReadonlySet<string> | null,
  options: GivenSubmitOptions,
): GraphTask {
  const task: { -readonly [K in keyof GraphTask]: GraphTask[K] } = {
    spec: { fn, args },
    dependencies: deps === null || deps.size === 0 ? NO_DEPENDENCIES : [...deps],
  };
  setTaskOptions(task, options);
  if (options.actor === true) task.actor = true;
  return task;
}

/** True for values that cannot contain futures or task references. */
export function isScalar(v: unknown): boolean {
  const t = typeof v;
  return t === "number" || t === "boolean" || t === "bigint" || t === "undefined" || v === null;
}

/**
 * The keys named in `options` (each once, in the order first named), or the
 * graph's sinks; a TypeError naming `op` unless they are an array or another
 * iterable (a string would be taken for its characters, null for no key at
 * all). A key that is not one of the graph's, of whatever type, is named later.
 */
export function wantedKeys(
  op: string,
  built: BuiltGraph,
  options: ComputeOptions,
): readonly string[] {
  const keys: unknown = options.keys;
  if (keys === undefined) return built.sinks;
  return [...new Set(itemsOf(op, "keys", keys) as readonly string[])];
}

/**
 * Whether a task submitted with `options` gets the key of its function and
 * arguments: unless `pure: false`, or it makes an actor and `pure` is not given
 * (each actor submission makes an object of its own, as in Dask).
 */
export function isPure(options: Pick<SubmitOptions, "pure" | "actor">): boolean {
  return options.pure ?? options.actor !== true;
}
