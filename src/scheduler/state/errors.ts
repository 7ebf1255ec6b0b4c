import { formatStory, type TransitionLogEntry } from "./story.ts";
import type { SchedulerTaskStateName } from "./taskState.ts";

/**
 * A transition the table does not allow, or one that failed part-way
 * (then `cause` holds the original error). Carries the task's story.
 */
export class InvalidTransition extends Error {
  override name = "InvalidTransition";
  /** Create the error for `key` going `start → finish`, with its story. */
  constructor(
    /** The key of the task whose transition was refused or failed. */
    readonly key: string,
    /** The state the task was in. */
    readonly start: SchedulerTaskStateName,
    /** The state it was asked to go to. */
    readonly finish: SchedulerTaskStateName,
    /** The task's story: the transition log entries that mention it. */
    readonly story: readonly TransitionLogEntry[],
    options?: { cause?: unknown },
  ) {
    const cause = options?.cause instanceof Error ? `\n  Cause: ${options.cause.message}` : "";
    super(`${key} :: ${start}->${finish}${cause}\n  Story:\n${formatStory(story)}`, options);
  }
}

/** The transition counter reached `transitionCounterMax`: a probable infinite loop. */
export class TransitionCounterMaxExceeded extends InvalidTransition {
  override name = "TransitionCounterMaxExceeded";
}

/** A task failed validation; carries the task's story and the failed check in `cause`. */
export class InvalidTaskState extends Error {
  override name = "InvalidTaskState";
  /** Create the error for `key` in `state`, with its story. */
  constructor(
    /** The key of the task that failed validation. */
    readonly key: string,
    /** The task's state when it failed validation. */
    readonly state: SchedulerTaskStateName,
    /** The task's story: the transition log entries that mention it. */
    readonly story: readonly TransitionLogEntry[],
    options?: { cause?: unknown },
  ) {
    const cause = options?.cause instanceof Error ? `\n  Cause: ${options.cause.message}` : "";
    super(`${key} :: ${state}${cause}\n  Story:\n${formatStory(story)}`, options);
  }
}

/**
 * A stimulus that is malformed or impossible (a missing field, a worker
 * registering twice). Thrown before the stimulus changes anything, so the
 * state machine is as it was; the shell logs it and drops the message.
 */
export class InvalidStimulus extends Error {
  override name = "InvalidStimulus";
}
