import { checkKnownOptions, type OptionNames } from "../../util/knownOptions.ts";
import { showValue } from "../../util/showValue.ts";

/** Configuration of a `SchedulerState`; every field has a default. */
export interface SchedulerStateOptions {
  /**
   * Seconds since an arbitrary origin. The state machine reads no wall clock:
   * this stamps the transition log and workers' `lastSeen`. Default: always 0.
   */
  clock?: () => number;
  /**
   * Check every touched task after every stimulus (expensive). Default false.
   * `validateState()` can be called at any time regardless.
   */
  validate?: boolean;
  /**
   * Root-task queuing (Dask's `distributed.scheduler.worker-saturation`):
   * root-ish tasks (Dask's `is_rootish`: a large group of tasks with few
   * inputs, see `placement.ts`) go to a worker only while it has fewer than
   * `max(ceil(workerSaturation × nthreads), 1)` tasks processing, and wait in
   * `queued` otherwise. `Infinity` disables queuing. Default 1.1.
   */
  workerSaturation?: number;
  /**
   * How many workers may die while running a task before it is marked erred
   * with `KilledWorker` (Dask's `allowed-failures`). Default 3.
   */
  allowedFailures?: number;
  /** Expected run time (seconds) of a function never seen finishing. Default 0.5. */
  unknownTaskDuration?: number;
  /** Assumed network bandwidth (bytes/s) for the cost of moving inputs. Default 100 MB/s. */
  bandwidth?: number;
  /** Assumed size (bytes) of a result whose size is unknown. Default 1 kiB. */
  defaultDataSize?: number;
  /** Raise once this many transitions have happened (debugging aid); false to disable. Default false. */
  transitionCounterMax?: number | false;
  /** Records kept in the transition log (`story`). Default 100,000. */
  logLength?: number;
  /** Records kept in the stimulus log. Default 10,000. */
  stimulusLogLength?: number;
}

/**
 * Every option of {@link SchedulerStateOptions}: others are refused, as the
 * worker's are, rather than leave the default running where a misspelt
 * `workerSaturaton` meant something else.
 */
export const SCHEDULER_STATE_OPTIONS: OptionNames<SchedulerStateOptions> = {
  clock: true,
  validate: true,
  workerSaturation: true,
  allowedFailures: true,
  unknownTaskDuration: true,
  bandwidth: true,
  defaultDataSize: true,
  transitionCounterMax: true,
  logLength: true,
  stimulusLogLength: true,
};

/** {@link SchedulerStateOptions} with every default filled in. */
export type ResolvedSchedulerStateOptions = Required<SchedulerStateOptions>;

/** Fill in the defaults of `options`, rejecting values that make no sense. */
export function resolveOptions(options: SchedulerStateOptions = {}): ResolvedSchedulerStateOptions {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`SchedulerState options must be an object, got ${showValue(options)}`);
  }
  checkKnownOptions("SchedulerState options", options, SCHEDULER_STATE_OPTIONS);
  const resolved: ResolvedSchedulerStateOptions = {
    clock: options.clock ?? (() => 0),
    validate: options.validate ?? false,
    workerSaturation: options.workerSaturation ?? 1.1,
    allowedFailures: options.allowedFailures ?? 3,
    unknownTaskDuration: options.unknownTaskDuration ?? 0.5,
    bandwidth: options.bandwidth ?? 100_000_000,
    defaultDataSize: options.defaultDataSize ?? 1024,
    transitionCounterMax: options.transitionCounterMax ?? false,
    logLength: options.logLength ?? 100_000,
    stimulusLogLength: options.stimulusLogLength ?? 10_000,
  };
  if (typeof resolved.clock !== "function") {
    throw new TypeError(`clock must be a function, got ${showValue(resolved.clock)}`);
  }
  if (typeof resolved.validate !== "boolean") {
    throw new TypeError(`validate must be a boolean, got ${showValue(resolved.validate)}`);
  }
  // typeof first: "2" > 0 and 2n > 0 hold too, and would poison the arithmetic later.
  const positive = (v: unknown): boolean => typeof v === "number" && v > 0;
  if (!positive(resolved.workerSaturation)) {
    throw new RangeError(
      `workerSaturation must be > 0 (Infinity disables queuing), got ${showValue(resolved.workerSaturation)}`,
    );
  }
  if (!Number.isInteger(resolved.allowedFailures) || resolved.allowedFailures < 0) {
    throw new RangeError(
      `allowedFailures must be an integer ≥ 0, got ${showValue(resolved.allowedFailures)}`,
    );
  }
  const unknown = resolved.unknownTaskDuration;
  if (typeof unknown !== "number" || !Number.isFinite(unknown) || unknown < 0) {
    throw new RangeError(
      `unknownTaskDuration must be a finite number of seconds ≥ 0, got ${showValue(unknown)}`,
    );
  }
  // A size in bytes, added to and taken from the workers' totals, as reported sizes are.
  if (!Number.isSafeInteger(resolved.defaultDataSize) || resolved.defaultDataSize < 0) {
    throw new RangeError(
      `defaultDataSize must be an integer ≥ 0, got ${showValue(resolved.defaultDataSize)}`,
    );
  }
  if (!positive(resolved.bandwidth)) {
    throw new RangeError(`bandwidth must be > 0, got ${showValue(resolved.bandwidth)}`);
  }
  const max = resolved.transitionCounterMax;
  if (max !== false && (!Number.isInteger(max) || max < 1)) {
    throw new RangeError(
      `transitionCounterMax must be false or a positive integer, got ${showValue(max)}`,
    );
  }
  for (const name of ["logLength", "stimulusLogLength"] as const) {
    const v = resolved[name];
    if (!Number.isInteger(v) || v < 0) {
      throw new RangeError(`${name} must be an integer ≥ 0, got ${showValue(v)}`);
    }
  }
  return resolved;
}
