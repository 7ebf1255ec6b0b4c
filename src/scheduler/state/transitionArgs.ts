import type { StartStop } from "../../worker/state/taskState.ts";

/** A worker reported the task's result (`task-finished`): the arguments of `→ memory`. */
export interface MemoryArgs {
  /** Tags the arguments as those of `→ memory`. */
  readonly kind: "memory";
  /** The address of the worker holding the result. */
  readonly worker: string;
  /** The result's size in bytes, or null if the worker did not say. */
  readonly nbytes: number | null;
  /** The result's type name. */
  readonly typename: string;
  /** The run's timings (wall-clock seconds), for duration estimates. */
  readonly startstops?: readonly StartStop[];
}

/** The task raised, or a worker running it died too often: the arguments of `→ erred`. */
export interface ErredArgs {
  /** Tags the arguments as those of `→ erred`. */
  readonly kind: "erred";
  /** The worker it erred on, if any. */
  readonly worker: string | null;
  /** The error the worker reported, opaque to the scheduler. */
  readonly exception: unknown;
  /** The opaque traceback the worker reported, or null. */
  readonly traceback: unknown;
  /** The error as text (Dask's `exception_text`). */
  readonly exceptionText: string;
  /** The traceback as text (Dask's `traceback_text`); may be empty. */
  readonly tracebackText: string;
  /**
   * The worker the task is processing on does not know it failed (the
   * scheduler decided it): tell that worker to drop the task.
   */
  readonly releaseOnWorker?: boolean;
}

/** Extra arguments some transitions take when a handler calls them directly. */
export type TransitionArgs = MemoryArgs | ErredArgs;
