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

/**
 * How many runs a chunk of the stream holds. The status page asks for the
 * runs of the last seconds every two seconds: a query skips a whole chunk
 * that ended before its `since`, so it reads a few hundred chunks' ends and
 * the runs it answers, not the 100,000 runs kept.
 */
const CHUNK = 256;

/** Runs in the order reported, with the latest end among them. */
interface Chunk {
  readonly records: TaskStreamRecord[];
  /** Each run's end ({@link lastStop}), beside it. */
  readonly stops: number[];
  /** The latest end of the chunk's runs, forgotten ones included (so an upper bound). */
  maxStop: number;
}

/** The last runs reported, oldest first. */
export class TaskStream {
  /** Oldest first; only the first chunk has forgotten runs (before `head`), only the last room. */
  private chunks: Chunk[] = [];
  /** The runs of the first chunk already forgotten. */
  private head = 0;
  private count = 0;

  /** @param length How many runs to keep (0: none). */
  constructor(private readonly length: number) {
    if (!(Number.isInteger(length) || length === Number.POSITIVE_INFINITY) || length < 0) {
      throw new RangeError(`length must be a non-negative integer or Infinity, got ${length}`);
    }
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
    if (this.length === 0 || typeof msg !== "object" || msg === null) return;
    const m = msg as { op?: unknown; key?: unknown; startstops?: unknown; nbytes?: unknown };
    if ((m.op !== "task-finished" && m.op !== "task-erred") || typeof m.key !== "string") return;
    this.push({
      key: m.key,
      worker,
      status: m.op === "task-finished" ? "OK" : "error",
      startstops: wellFormedStartStops(m.startstops),
      nbytes:
        Number.isSafeInteger(m.nbytes) && (m.nbytes as number) >= 0 ? (m.nbytes as number) : null,
    });
  }

  /**
   * The runs `query` asks for, oldest first. It reads from the newest run
   * back, skipping chunks that all ended before `since`, and stops at
   * `count`: its cost is that of what it answers, not of all the runs kept.
   * Runs are kept in the order reported, not that of their ends (workers'
   * clocks differ, reports wait in queues), so a run reported early may end
   * after one reported later, and no run is taken for the window's edge.
   */
  query(query: TaskStreamQuery = {}): TaskStreamRecord[] {
    const since = query.since ?? Number.NEGATIVE_INFINITY;
    const count = query.count ?? Number.POSITIVE_INFINITY;
    const out: TaskStreamRecord[] = [];
    for (let c = this.chunks.length - 1; c >= 0 && out.length < count; c--) {
      const chunk = this.chunks[c];
      if (chunk.maxStop < since) continue;
      const first = c === 0 ? this.head : 0;
      for (let i = chunk.records.length - 1; i >= first && out.length < count; i--) {
        if (chunk.stops[i] >= since) out.push(chunk.records[i]);
      }
    }
    return out.reverse();
  }

  private push(record: TaskStreamRecord): void {
    const stop = lastStop(record);
    let last = this.chunks.at(-1);
    if (last === undefined || last.records.length === CHUNK) {
      last = { records: [], stops: [], maxStop: Number.NEGATIVE_INFINITY };
      this.chunks.push(last);
    }
    last.records.push(record);
    last.stops.push(stop);
    if (stop > last.maxStop) last.maxStop = stop;
    if (++this.count <= this.length) return;
    // Forget the oldest; a chunk goes once all its runs are forgotten (the
    // array shifts a few hundred entries once per CHUNK runs).
    this.count--;
    if (++this.head === this.chunks[0].records.length) {
      this.chunks.shift();
      this.head = 0;
    }
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
