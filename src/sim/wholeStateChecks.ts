/**
 * When a simulated machine's whole state is validated. The state machines check
 * every task a stimulus changed after that stimulus (their `validate` option);
 * `validateState()` checks everything else too, every task and every collection,
 * and costs as much as the machine is big: run after every stimulus it made a run
 * of n tasks cost n², minutes at 10,000 tasks and hours at 100,000. So the machines
 * of a run of a small workload (every built-in one at its default size) are checked
 * whole after every stimulus, as always; those of a bigger one every so many of
 * their stimuli, spaced by their size so that the checks cost about
 * {@link WHOLE_CHECK_TASKS_PER_STIMULUS} tasks' worth a stimulus (a machine's size
 * changes while the run goes on: a limit on it, not on the workload, made a worker
 * that held about as many tasks as the limit the costliest of all). Every machine
 * is also checked at the end of each phase, and before a failure of another kind is
 * reported (a state gone wrong a few stimuli before is the better cause).
 */

import { errorText, SimFailure } from "./failure.ts";

/** The machines of a run of at most this many tasks are checked whole after every stimulus. */
export const WHOLE_CHECK_EVERY_STIMULUS_UP_TO = 2_000;

/**
 * In a run of more tasks, a machine of `size` tasks and workers is checked whole
 * every ⌈size / this⌉ of its stimuli.
 */
export const WHOLE_CHECK_TASKS_PER_STIMULUS = 10;

/** How often: `"auto"` (by size, above) or after every N stimuli of the machine. */
export type ValidateEvery = number | "auto";

/**
 * Stimuli between two whole checks of a machine of `size` tasks and workers, in a
 * run of a workload of `workloadTasks`.
 */
export function wholeCheckInterval(
  every: ValidateEvery,
  workloadTasks: number,
  size: number,
): number {
  if (every !== "auto") return every;
  if (workloadTasks <= WHOLE_CHECK_EVERY_STIMULUS_UP_TO) return 1;
  return Math.max(1, Math.ceil(size / WHOLE_CHECK_TASKS_PER_STIMULUS));
}

/** One machine's schedule of whole checks. */
export class WholeStateChecks {
  /** Its stimuli since its state was last checked whole. */
  unchecked = 0;

  constructor(
    private readonly every: ValidateEvery,
    /** The tasks of the run's workload. */
    private readonly workloadTasks: number,
  ) {}

  /** After one more stimulus of the machine, of `size` tasks and workers: check it whole now? */
  due(size: number): boolean {
    this.unchecked++;
    return this.unchecked >= wholeCheckInterval(this.every, this.workloadTasks, size);
  }

  /**
   * Check the machine whole now with `validateState`; its failure is an
   * `invalid-state` run failure naming the machine (`who`) and `when` (after what).
   */
  check(who: string, when: string, validateState: () => void): void {
    try {
      validateState();
    } catch (e) {
      throw new SimFailure(
        "invalid-state",
        `${who}: validateState failed ${when}${this.hint()}: ${errorText(e)}`,
        "",
        { cause: e },
      );
    }
    this.unchecked = 0;
  }

  /**
   * {@link check} if a stimulus came since the machine last was checked whole: at
   * the end of a phase, or before a run's failure is reported.
   */
  checkPending(who: string, when: string, validateState: () => void): void {
    if (this.unchecked > 0) this.check(who, when, validateState);
  }

  /**
   * What a failed whole check adds to its message: where the state may have gone
   * wrong when the check before came more than a stimulus earlier, and how to find
   * the stimulus. Empty when the last stimulus was the only one unchecked.
   */
  private hint(): string {
    if (this.unchecked <= 1) return "";
    return ` (checked whole ${this.unchecked} stimuli before, only the tasks each changed after each: it broke at one of those ${this.unchecked}; replay with --validate-every 1 to find which)`;
  }
}
