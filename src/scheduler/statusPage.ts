/**
 * `/status` of the scheduler's HTTP endpoints: one HTML page, refreshed every
 * two seconds, of what Dask's dashboard shows first: the workers, the tasks by
 * prefix and state (Dask's progress bars, as counts), and the last task runs.
 * Server-rendered, without scripts or assets.
 */

import type { TaskStreamRecord } from "../protocol/messagesSession.ts";
import { formatBytes } from "../util/parseBytes.ts";
import type { Scheduler } from "./scheduler.ts";
import { SCHEDULER_TASK_STATES, type SchedulerTaskStateName } from "./state/taskState.ts";

/** The states shown as columns: all but `forgotten` (such tasks are gone). */
const STATES = SCHEDULER_TASK_STATES.filter((s) => s !== "forgotten");

/** How many of the last task runs the page lists. */
const RECENT_RUNS = 20;

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
  }[];
  /** Task counts by prefix, then state; with the bytes of its results in memory. */
  readonly prefixes: readonly {
    readonly prefix: string;
    readonly counts: Readonly<Partial<Record<SchedulerTaskStateName, number>>>;
    readonly bytes: number;
  }[];
  readonly recent: readonly TaskStreamRecord[];
}

/** Read what the page shows from `s`. */
export function statusSnapshot(s: Scheduler): StatusSnapshot {
  const byPrefix = new Map<string, { counts: Record<string, number>; bytes: number }>();
  for (const ts of s.state.tasks.values()) {
    const name = ts.group.name;
    let row = byPrefix.get(name);
    if (row === undefined) byPrefix.set(name, (row = { counts: {}, bytes: 0 }));
    row.counts[ts.state] = (row.counts[ts.state] ?? 0) + 1;
    if (ts.state === "memory" && ts.nbytes > 0) row.bytes += ts.nbytes;
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
      }))
      .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0)),
    prefixes: [...byPrefix]
      .map(([prefix, row]) => ({ prefix, counts: row.counts, bytes: row.bytes }))
      .sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0)),
    recent: s.taskStream.query({ count: RECENT_RUNS }),
  };
}

/** `&<>"'` escaped, for text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const th = head.map((h) => `<th>${escapeHtml(h)}</th>`).join("");
  const body =
    rows.length === 0
      ? `<tr><td colspan="${head.length}">none</td></tr>`
      : rows
          .map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`)
          .join("\n");
  return `<table><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** The page. */
export function renderStatusPage(snap: StatusSnapshot): string {
  // A name column when some worker has a name.
  const named = snap.workers.some((w) => typeof w.name === "string");
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
    ],
    snap.workers.map((w) => [
      w.address,
      ...(named ? [w.name ?? ""] : []),
      w.status,
      String(w.nthreads),
      String(w.processing),
      String(w.held),
      formatBytes(w.bytes),
      w.memoryLimit === null ? "" : formatBytes(w.memoryLimit),
    ]),
  );
  const tasks = table(
    ["prefix", ...STATES, "bytes in memory"],
    snap.prefixes.map((p) => [
      p.prefix,
      ...STATES.map((st) => String(p.counts[st] ?? 0)),
      formatBytes(p.bytes),
    ]),
  );
  const recent = table(
    ["key", "worker", "status", "seconds computing", "result bytes"],
    [...snap.recent].reverse().map((r) => {
      const compute = r.startstops.find((ss) => ss.action === "compute");
      return [
        r.key,
        r.worker,
        r.status,
        compute === undefined ? "" : (compute.stop - compute.start).toFixed(4),
        r.nbytes === null ? "" : String(r.nbytes),
      ];
    }),
  );
  const title = `weft scheduler ${snap.address}`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="2">
<title>${escapeHtml(title)}</title>
<style>body{font:14px system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:1.5em}th,td{border:1px solid #ccc;padding:2px 8px;text-align:right}th:first-child,td:first-child{text-align:left}</style>
</head><body>
<h1>${escapeHtml(title)}</h1>
<p>status ${escapeHtml(snap.status)}, ${snap.workers.length} workers, ${snap.clients} clients (this page refreshes every 2 s; <a href="/metrics">metrics</a>)</p>
<h2>Workers</h2>
${workers}
<h2>Tasks by prefix and state</h2>
${tasks}
<h2>Last task runs</h2>
${recent}
</body></html>
`;
}
