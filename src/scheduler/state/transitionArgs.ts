import type { StartStop } from "../../worker/state/taskState.ts";

/** A worker reported the task's result (`task-finished`): the arguments of `→ memory`. */
export interface MemoryArgs {
  readonly kind: "memory";
  readonly worker: string;
  readonly nbytes: number | null;
  readonly typename: string;
  readonly startstops?: readonly StartStop[];
}

/** The task raised, or a worker running it died too often: the arguments of `→ erred`. */
export interface ErredArgs {
  readonly kind: "erred";
  /** The worker it erred on, if any. */
  readonly worker: string | null;
  readonly exception: unknown;
  readonly traceback: unknown;
  readonly exceptionText: string;
  readonly tracebackText: string;
  /**
   * The worker the task is processing on does not know it failed (the
   * scheduler decided it): tell that worker to drop the task.
   */
  readonly releaseOnWorker?: boolean;
}

/** Extra arguments some transitions take when a handler calls them directly. */
export type TransitionArgs = MemoryArgs | ErredArgs;
