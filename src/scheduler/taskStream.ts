/**
 * The task stream (Dask's `TaskStreamPlugin`, behind `Client.get_task_stream`):
 * the scheduler server keeps a record of each task run its workers report,
 * finished or erred, with where it ran and when (the worker's `startstops`:
 * the compute, and the transfers of its inputs), the last `length` of them.
 * It records the reports the state machine handled, runs it then ignores (a
 * run cancelled meanwhile) included, but not those it rejected (malformed, or
 * for a task the worker was never given): a peer posing as a worker must not
 * be able to put invented runs, or timings every reader trips on, in front of
 * every client.
 */

import type { TaskStreamRecord } from "../protocol/messagesSession.ts";
import { BoundedDeque } from "../util/boundedDeque.ts";
import type { StartStop } from "../worker/state/taskState.ts";
import type { SchedulerEvent } from "./state/events.ts";

/** What a client asks of the task stream: runs ending at `since` (wall-clock seconds) or later, the last `count` of them. */
export interface TaskStreamQuery {
  /**
   * Only runs ending at this time or later (wall-clock seconds since the epoch). Default: all kept.
   */
  readonly since?: number;
  /** Only the last this many runs. Default: all kept. */
  readonly count?: number;
}

/** The last runs reported, oldest first. */
export class TaskStream {
  private readonly records: BoundedDeque<TaskStreamRecord>;

  /** @param length How many runs to keep (0: none). */
  constructor(length: number) {
    this.records = new BoundedDeque(length);
  }

  /** Record the runs that a batch of stimuli the state machine handled reports. */
  observeHandled(events: readonly SchedulerEvent[]): void {
    for (const ev of events) if (ev.kind === "worker-message") this.observe(ev.worker, ev.msg);
  }

  /**
   * A message of `worker`: recorded if it reports a task's run. Give only
   * messages the state machine accepted ({@link observeHandled}).
   */
  observe(worker: string, msg: unknown): void {
    if (this.records.maxlen === 0 || typeof msg !== "object" || msg === null) return;
    const m = msg as { op?: unknown; key?: unknown; startstops?: unknown; nbytes?: unknown };
    if ((m.op !== "task-finished" && m.op !== "task-erred") || typeof m.key !== "string") return;
    this.records.push({
      key: m.key,
      worker,
      status: m.op === "task-finished" ? "OK" : "error",
      startstops: wellFormedStartStops(m.startstops),
      nbytes:
        Number.isSafeInteger(m.nbytes) && (m.nbytes as number) >= 0 ? (m.nbytes as number) : null,
    });
  }

  /** The runs `query` asks for, oldest first. */
  query(query: TaskStreamQuery = {}): TaskStreamRecord[] {
    const { since, count } = query;
    let out = [...this.records];
    if (since !== undefined) out = out.filter((r) => lastStop(r) >= since);
    return count === undefined ? out : out.slice(Math.max(0, out.length - count));
  }
}

/** When the run ended: its last stop (0 without timings). */
function lastStop(r: TaskStreamRecord): number {
  let stop = 0;
  for (const ss of r.startstops) if (typeof ss.stop === "number" && ss.stop > stop) stop = ss.stop;
  return stop;
}

/**
 * The entries of `v` that are `{action, start, stop}` with finite times, copied
 * (`source` kept if a string). The state machine checks only that the times
 * are numbers, and a task-erred's not at all, while every reader of the records
 * (`since` queries, the status page's chart) computes with them: NaN or
 * Infinity would put a run everywhere or nowhere, and a null would throw.
 */
function wellFormedStartStops(v: unknown): StartStop[] {
  if (!Array.isArray(v)) return [];
  const out: StartStop[] = [];
  for (const ss of v as unknown[]) {
    if (typeof ss !== "object" || ss === null) continue;
    const { action, start, stop, source } = ss as Record<string, unknown>;
    if (typeof action !== "string" || !Number.isFinite(start) || !Number.isFinite(stop)) continue;
    out.push({
      // Any name: a worker of another version may time other actions.
      action: action as StartStop["action"],
      start: start as number,
      stop: stop as number,
      ...(typeof source === "string" ? { source } : {}),
    });
  }
  return out;
}
