import { pyKeyRepr } from "../../util/pyString.ts";
import { type LogEntry, LoggedRecs } from "./log.ts";
import type { TaskStateState } from "./taskState.ts";

function formatStory(story: readonly LogEntry[]): string {
  return story.map((entry) => `    ${formatLogEntry(entry)}`).join("\n");
}

/** Render one log entry the way Python prints a tuple, so stories read like Dask's. */
export function formatLogEntry(entry: LogEntry): string {
  const parts = entry.map((v) => formatValue(v));
  return parts.length === 1 ? `(${parts[0]},)` : `(${parts.join(", ")})`;
}

function formatValue(v: unknown): string {
  if (typeof v === "string") return pyKeyRepr(v);
  if (v === null || v === undefined) return "None";
  if (typeof v === "boolean") return v ? "True" : "False";
  if (Array.isArray(v)) return `[${v.map(formatValue).join(", ")}]`;
  if (v instanceof Set) return v.size === 0 ? "set()" : `{${[...v].map(formatValue).join(", ")}}`;
  if (v instanceof LoggedRecs) return formatValue(v.toMap());
  if (v instanceof Map) {
    return `{${[...v].map(([k, x]) => `${formatValue(k)}: ${formatValue(x)}`).join(", ")}}`;
  }
  if (typeof v === "object") {
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${pyKeyRepr(k)}: ${formatValue(x)}`)
      .join(", ")}}`;
  }
  return String(v);
}

/** A transition that the table does not allow, with the task's story. */
export class InvalidTransition extends Error {
  override name = "InvalidTransition";
  constructor(
    /** The key of the task whose transition was refused. */
    readonly key: string,
    /** The state the task was in. */
    readonly start: TaskStateState,
    /** The state it was asked to go to. */
    readonly finish: TaskStateState,
    /** The task's story: the transition log entries that mention it. */
    readonly story: readonly LogEntry[],
    options?: { cause?: unknown },
  ) {
    super(`${key} :: ${start}->${finish}\n  Story:\n${formatStory(story)}`, options);
  }

  /** The event the Worker sends to the scheduler's event log (`invalid-worker-transition`). */
  toEvent(): [string, Record<string, unknown>] {
    return [
      "invalid-worker-transition",
      { key: this.key, start: this.start, finish: this.finish, story: this.story },
    ];
  }
}

/** `transition_counter` reached `transition_counter_max`: a probable infinite loop. */
export class TransitionCounterMaxExceeded extends InvalidTransition {
  override name = "TransitionCounterMaxExceeded";
  override toEvent(): [string, Record<string, unknown>] {
    const [, msg] = super.toEvent();
    return ["transition-counter-max-exceeded", msg];
  }
}

/** A task failed validation; carries the task's story. */
export class InvalidTaskState extends Error {
  override name = "InvalidTaskState";
  constructor(
    /** The key of the task that failed validation. */
    readonly key: string,
    /** The task's state when it failed validation. */
    readonly state: TaskStateState,
    /** The task's story: the transition log entries that mention it. */
    readonly story: readonly LogEntry[],
    options?: { cause?: unknown },
  ) {
    const cause = options?.cause instanceof Error ? `\n  Cause: ${options.cause.message}` : "";
    super(`${key} :: ${state}${cause}\n  Story:\n${formatStory(story)}`, options);
  }

  /** The event the Worker sends to the scheduler's event log (`invalid-worker-task-state`). */
  toEvent(): [string, Record<string, unknown>] {
    return ["invalid-worker-task-state", { key: this.key, state: this.state, story: this.story }];
  }
}

/** Two or more recommendations for the same task suggested different finish states. */
export class RecommendationsConflict extends Error {
  override name = "RecommendationsConflict";
}
