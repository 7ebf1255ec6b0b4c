/**
 * `/status` of the scheduler's HTTP endpoints: one HTML page, refreshed every
 * two seconds, of what Dask's dashboard shows first: the workers (with bars of
 * their memory against its limit), the tasks by prefix and state (Dask's
 * progress bars, and the counts), the task stream of the last seconds, and the
 * last task runs. Server-rendered, without scripts or assets.
 */

import type { TaskStreamRecord } from "../protocol/messagesSession.ts";
import {
  escapeHtml,
  Html,
  htmlPage,
  htmlTable as table,
  usageBar,
  wrappingText,
} from "../util/html.ts";
import { formatBytes } from "../util/parseBytes.ts";
import { topRows } from "../util/topRows.ts";
import type { Scheduler } from "./scheduler.ts";
import { SCHEDULER_TASK_STATES, type SchedulerTaskStateName } from "./state/taskState.ts";
import { progressBar, progressLegend, recentTaskStreamSvg } from "./statusCharts.ts";

export { escapeHtml };

/** The states shown as columns: all but `forgotten` (such tasks are gone). */
const STATES = SCHEDULER_TASK_STATES.filter((s) => s !== "forgotten");

/**
 * How many workers, and task prefixes, the page lists: a thousand workers'
 * rows and five thousand prefixes' made a page of 2.8 MB, which the browser
 * fetched again every 2 s and the scheduler's event loop spent 130 ms drawing.
 */
const WORKER_ROWS = 100;
const PREFIX_ROWS = 50;
/** How many workers' lanes the task stream draws. */
const STREAM_WORKERS = 30;

/** How many of the last task runs the page lists. */
const RECENT_RUNS = 20;
/** The most seconds of task stream the page draws (less when the runs span less). */
const STREAM_WINDOW_SECONDS = 20;
/** At most this many of the last runs are drawn (a busy cluster finishes thousands a second). */
const STREAM_RUNS = 2_000;

/** What the page shows, read from the scheduler in one go. */
export interface StatusSnapshot {
  readonly address: string;
  readonly status: string;
  readonly clients: number;
  readonly workers: readonly {
    readonly address: string;
    /** Its name (`weft worker --name`), or null. */
    readonly name?: string | null;
    readonly status: string;
    readonly nthreads: number;
    readonly processing: number;
    readonly held: number;
    readonly bytes: number;
    readonly memoryLimit: number | null;
    /** The process memory its monitor last measured (heartbeats), or null. */
    readonly memory?: number | null;
  }[];
  /** Task counts by prefix, then state; with the bytes of its results in memory. */
  readonly prefixes: readonly {
    readonly prefix: string;
    readonly counts: Readonly<Partial<Record<SchedulerTaskStateName, number>>>;
    readonly bytes: number;
  }[];
  readonly recent: readonly TaskStreamRecord[];
  /** Wall-clock seconds when the snapshot was taken; without it, no task stream is drawn. */
  readonly now?: number;
  /** The runs of the task stream's window, oldest first. */
  readonly stream?: readonly TaskStreamRecord[];
}

/** Read what the page shows from `s`. */
export function statusSnapshot(s: Scheduler): StatusSnapshot {
  const now = Date.now() / 1000;
  // Each group keeps its counts as its tasks move: no scan of every task.
  const byPrefix = new Map<string, { counts: Record<string, number>; bytes: number }>();
  for (const tg of s.state.taskGroups.values()) {
    const counts: Record<string, number> = {};
    for (const st of STATES) if (tg.states[st] > 0) counts[st] = tg.states[st];
    byPrefix.set(tg.name, { counts, bytes: tg.memoryBytes });
  }
  return {
    address: s.address,
    status: s.status,
    clients: s.router.clients.size,
    workers: [...s.state.workers.values()]
      .map((ws) => ({
        address: ws.address,
        name: ws.name,
        status: ws.status,
        nthreads: ws.nthreads,
        processing: ws.processing.size,
        held: ws.hasWhat.size,
        bytes: ws.nbytes,
        memoryLimit: ws.memoryLimit,
        memory: ws.memory,
      }))
      .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0)),
    prefixes: [...byPrefix]
      .map(([prefix, row]) => ({ prefix, counts: row.counts, bytes: row.bytes }))
      .sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0)),
    recent: s.taskStream.query({ count: RECENT_RUNS }),
    now,
    stream: s.taskStream.query({ since: now - STREAM_WINDOW_SECONDS, count: STREAM_RUNS }),
  };
}

type WorkerRow = StatusSnapshot["workers"][number];
type PrefixRow = StatusSnapshot["prefixes"][number];

/** What a worker's memory bar shows: its process memory as measured, else its results' bytes. */
const memoryUsed = (w: WorkerRow) => w.memory ?? w.bytes;

/** The workers listed first: those paused or retiring, then those nearest their memory limit. */
function workerRank(w: WorkerRow): number[] {
  const used = memoryUsed(w);
  return [Number(w.status !== "running"), w.memoryLimit ? used / w.memoryLimit : 0, used];
}

/**
 * The prefixes listed first: those with tasks erred or without a worker (a
 * stuck graph), then those with the most tasks to go, then the most tasks.
 */
function prefixRank(p: PrefixRow): number[] {
  const stuck = (p.counts.erred ?? 0) + (p.counts["no-worker"] ?? 0) > 0;
  const total = STATES.reduce((n, st) => n + (p.counts[st] ?? 0), 0);
  return [Number(stuck), total - (p.counts.memory ?? 0), total];
}

/** The line under a table that lists only its top rows. */
function moreNote(more: number, what: string): string {
  return more === 0 ? "" : `<p class="note">${escapeHtml(`and ${more} more ${what}`)}</p>\n`;
}

/** The page. */
export function renderStatusPage(snap: StatusSnapshot): string {
  const shownWorkers = topRows(snap.workers, WORKER_ROWS, workerRank);
  const shownPrefixes = topRows(snap.prefixes, PREFIX_ROWS, prefixRank);
  // A name column when some worker has a name.
  const named = shownWorkers.shown.some((w) => typeof w.name === "string");
  const workers = table(
    [
      "worker",
      ...(named ? ["name"] : []),
      "status",
      "threads",
      "processing",
      "results held",
      "bytes",
      "memory limit",
      "memory",
    ],
    shownWorkers.shown.map((w) => {
      const used = memoryUsed(w);
      const what = `${w.memory != null ? "process memory" : "results"} ${formatBytes(used)}`;
      return [
        wrappingText(w.address),
        ...(named ? [wrappingText(w.name ?? "")] : []),
        w.status,
        String(w.nthreads),
        String(w.processing),
        String(w.held),
        formatBytes(w.bytes),
        w.memoryLimit === null ? "" : formatBytes(w.memoryLimit),
        new Html(
          usageBar(
            used,
            w.memoryLimit,
            w.memoryLimit === null ? what : `${what} of ${formatBytes(w.memoryLimit)}`,
          ),
        ),
      ];
    }),
  );
  const tasks = table(
    ["prefix", "progress", ...STATES, "bytes in memory"],
    shownPrefixes.shown.map((p) => [
      wrappingText(p.prefix),
      new Html(progressBar(p.counts)),
      ...STATES.map((st) => String(p.counts[st] ?? 0)),
      formatBytes(p.bytes),
    ]),
  );
  const stream =
    snap.now === undefined
      ? ""
      : `<h2>Task stream</h2>
${recentTaskStreamSvg(snap.stream ?? [], snap.now, STREAM_WINDOW_SECONDS, STREAM_WORKERS)}
<p class="legend">computes coloured by prefix (black: erred); red: transfers of their inputs; orange: disk reads</p>
`;
  const recent = table(
    ["key", "worker", "status", "seconds computing", "result bytes"],
    snap.recent
      .slice(-RECENT_RUNS)
      .reverse()
      .map((r) => {
        const compute = r.startstops.find((ss) => ss.action === "compute");
        return [
          wrappingText(r.key),
          wrappingText(r.worker),
          r.status,
          compute === undefined ? "" : (compute.stop - compute.start).toFixed(4),
          r.nbytes === null ? "" : String(r.nbytes),
        ];
      }),
  );
  const title = `weft scheduler ${snap.address}`;
  return htmlPage(
    title,
    `<p>status ${escapeHtml(snap.status)}, ${snap.workers.length} workers, ${snap.clients} clients (this page refreshes every 2 s; <a href="/metrics">metrics</a>)</p>
<h2>Workers</h2>
${workers}
${moreNote(shownWorkers.more, "workers, not shown: those paused or retiring first, then those using the most of their memory limit; /json/identity.json and weft status list them all")}<h2>Tasks by prefix and state</h2>
${tasks}
${moreNote(shownPrefixes.more, "prefixes, not shown: those with tasks erred or without a worker first, then those with the most tasks not yet in memory, then the most tasks")}<p class="legend">${progressLegend()}</p>
${stream}<h2>Last task runs</h2>
${recent}
`,
    { refreshSeconds: 2 },
  );
}
