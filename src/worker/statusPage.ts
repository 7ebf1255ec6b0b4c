/**
 * `/status` of a worker's HTTP endpoints (Dask's worker dashboard, in one
 * page): what the worker holds and does now, from its state machine: tasks by
 * prefix and state, memory against its limit, the tasks executing, the
 * transfers under way, and its last transitions with the stimuli that caused
 * them. Refreshes itself every two seconds; server-rendered, no scripts.
 */

import { escapeHtml, Html, htmlPage, htmlTable, usageBar, wrappingText } from "../util/html.ts";
import { formatBytes } from "../util/parseBytes.ts";
import { topRows } from "../util/topRows.ts";
import { TASK_STATES, type TaskStateState } from "./state/taskState.ts";
import type { Worker } from "./worker.ts";

/** What the status page and the metrics read of a worker, and nothing else of it. */
export type WorkerView = Pick<
  Worker,
  "address" | "options" | "status" | "state" | "spillStats" | "dataServer"
>;

/** The states shown as columns, in the order of a task's life: all but `forgotten`. */
const STATES: readonly TaskStateState[] = [
  "released",
  "waiting",
  "ready",
  "constrained",
  "executing",
  "long-running",
  "fetch",
  "flight",
  "missing",
  "memory",
  "error",
  "cancelled",
  "resumed",
  "rescheduled",
];

/** How many of the executing tasks, of the peers fetched from, and of the last transitions, the page lists. */
const LISTED = 30;
/** How many task prefixes the page lists: 5,000 made a page of 900 kB, refetched every 2 s. */
const PREFIX_ROWS = 50;
/** How many of the keys fetched from a peer the page names. */
const KEYS_NAMED = 5;

/** What the page shows, read from the worker in one go. */
export interface WorkerStatusSnapshot {
  readonly address: string;
  readonly name: string | null;
  readonly status: string;
  readonly scheduler: string;
  readonly nthreads: number;
  readonly executor: string;
  /** Wall-clock seconds, for the ages of the transitions. */
  readonly now: number;
  readonly memory: {
    /** The results' bytes (in memory and spilled, as measured in memory). */
    readonly results: number;
    readonly spilled: number;
    readonly rss: number;
    readonly limit: number | null;
  };
  /** Task counts by prefix, then state. */
  readonly prefixes: readonly {
    readonly prefix: string;
    readonly counts: Readonly<Partial<Record<TaskStateState, number>>>;
  }[];
  /** The tasks executing (long-running ones too), at most {@link LISTED}, and how many. */
  readonly executing: readonly { readonly key: string; readonly state: string }[];
  readonly executingCount: number;
  /** The fetches under way: each peer asked, the first keys asked of it, and how many. */
  readonly incoming: readonly {
    readonly peer: string;
    readonly keys: readonly string[];
    readonly keyCount: number;
  }[];
  readonly incomingBytes: number;
  /** The transfers this worker serves to peers now. */
  readonly outgoingCount: number;
  readonly outgoingBytes: number;
  /** The last transitions, newest first: key, start → finish, the stimulus, when. */
  readonly transitions: readonly {
    readonly key: string;
    readonly start: string;
    readonly finish: string;
    readonly stimulusId: string;
    readonly time: number;
  }[];
}

function isState(v: unknown): v is TaskStateState {
  return typeof v === "string" && (TASK_STATES as readonly string[]).includes(v);
}

/** Read what the page shows from `w`. */
export function workerStatusSnapshot(w: WorkerView): WorkerStatusSnapshot {
  const state = w.state;
  const spill = w.spillStats;
  const prefixes = new Map<string, Partial<Record<TaskStateState, number>>>();
  for (const { prefix, state: st, value } of state.taskCounter.currentCount(true)) {
    if (value === 0 || st === "forgotten") continue;
    let row = prefixes.get(prefix);
    if (row === undefined) prefixes.set(prefix, (row = {}));
    row[st] = value;
  }
  const executing = [...state.executing, ...state.longRunning];
  const transitions: WorkerStatusSnapshot["transitions"][number][] = [];
  const log = state.log;
  for (let i = log.length - 1; i >= 0 && transitions.length < LISTED; i--) {
    const entry = log.at(i);
    // A transition's record (Dask's): key, start, the finish asked for, the state it
    // reached, recommendations, stimulus id, time.
    if (entry === undefined || entry.length !== 7) continue;
    const [key, start, , finish, , stimulusId, time] = entry;
    if (typeof key !== "string" || !isState(start) || !isState(finish)) continue;
    transitions.push({
      key,
      start,
      finish,
      stimulusId: String(stimulusId),
      time: typeof time === "number" ? time : 0,
    });
  }
  return {
    address: w.address,
    name: w.options.name,
    status: w.status,
    scheduler: w.options.scheduler,
    nthreads: state.nthreads,
    executor: w.options.executor,
    now: Date.now() / 1000,
    memory: {
      results: state.nbytes,
      spilled: spill?.spilledBytes ?? 0,
      rss: process.memoryUsage.rss(),
      limit: w.options.memoryLimit,
    },
    prefixes: [...prefixes]
      .map(([prefix, counts]) => ({ prefix, counts }))
      .sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0)),
    executing: executing.slice(0, LISTED).map((ts) => ({ key: ts.key, state: ts.state })),
    executingCount: executing.length,
    incoming: [...state.inFlightWorkers].map(([peer, keys]) => {
      const named: string[] = [];
      for (const key of keys) {
        if (named.length === KEYS_NAMED) break;
        named.push(key);
      }
      return { peer, keys: named, keyCount: keys.size };
    }),
    incomingBytes: state.transferIncomingBytes,
    outgoingCount: w.dataServer.outgoingCount,
    outgoingBytes: w.dataServer.outgoingBytes,
    transitions,
  };
}

type PrefixRow = WorkerStatusSnapshot["prefixes"][number];

/**
 * The prefixes listed first: those with tasks erred or missing (no peer has
 * their input), then those with the most tasks to go, then the most tasks.
 */
function prefixRank(p: PrefixRow): number[] {
  const stuck = (p.counts.error ?? 0) + (p.counts.missing ?? 0) > 0;
  const total = STATES.reduce((n, st) => n + (p.counts[st] ?? 0), 0);
  return [Number(stuck), total - (p.counts.memory ?? 0), total];
}

/** The line under a table that lists only its top rows. */
function moreNote(more: number, what: string): string {
  return more === 0 ? "" : `<p class="note">${escapeHtml(`and ${more} more ${what}`)}</p>\n`;
}

/** The page. */
export function renderWorkerStatusPage(snap: WorkerStatusSnapshot): string {
  const shownPrefixes = topRows(snap.prefixes, PREFIX_ROWS, prefixRank);
  const shownPeers = topRows(snap.incoming, LISTED, (f) => [f.keyCount]);
  const m = snap.memory;
  const memory = htmlTable(
    ["results", "spilled to disk", "process memory", "memory limit", ""],
    [
      [
        formatBytes(m.results),
        formatBytes(m.spilled),
        formatBytes(m.rss),
        m.limit === null ? "none" : formatBytes(m.limit),
        new Html(
          usageBar(
            m.rss,
            m.limit,
            `process memory ${formatBytes(m.rss)}${m.limit === null ? "" : ` of ${formatBytes(m.limit)}`}`,
          ),
        ),
      ],
    ],
  );
  const tasks = htmlTable(
    ["prefix", ...STATES],
    shownPrefixes.shown.map((p) => [
      wrappingText(p.prefix),
      ...STATES.map((st) => String(p.counts[st] ?? 0)),
    ]),
  );
  const executing = htmlTable(
    ["key", "state"],
    snap.executing.map((e) => [wrappingText(e.key), e.state]),
  );
  const more =
    snap.executingCount > snap.executing.length
      ? `<p class="note">and ${snap.executingCount - snap.executing.length} more</p>\n`
      : "";
  const incoming = htmlTable(
    ["from peer", "keys"],
    shownPeers.shown.map((f) => [
      wrappingText(f.peer),
      wrappingText(
        f.keyCount > KEYS_NAMED
          ? `${f.keys.slice(0, KEYS_NAMED).join(", ")}, … (${f.keyCount})`
          : f.keys.join(", "),
      ),
    ]),
  );
  const transitions = htmlTable(
    ["key", "from", "to", "stimulus", "seconds ago"],
    snap.transitions.map((t) => [
      wrappingText(t.key),
      t.start,
      t.finish,
      t.stimulusId,
      Math.max(0, snap.now - t.time).toFixed(3),
    ]),
  );
  const title = `weft worker ${snap.address}${snap.name === null ? "" : ` (${snap.name})`}`;
  return htmlPage(
    title,
    `<p>status ${escapeHtml(snap.status)}, ${snap.nthreads} threads (${escapeHtml(snap.executor)}), scheduler ${escapeHtml(snap.scheduler)} (this page refreshes every 2 s; <a href="/metrics">metrics</a>)</p>
<h2>Memory</h2>
${memory}
<h2>Tasks by prefix and state</h2>
${tasks}
${moreNote(shownPrefixes.more, "prefixes, not shown: those with tasks erred or missing first, then those with the most tasks not yet in memory, then the most tasks")}<h2>Executing (${snap.executingCount})</h2>
${executing}
${more}<h2>Transfers</h2>
<p>fetching ${formatBytes(snap.incomingBytes)} from ${snap.incoming.length} peers; serving ${snap.outgoingCount} transfers (${formatBytes(snap.outgoingBytes)}) to peers</p>
${incoming}
${moreNote(shownPeers.more, "peers, not shown: those listed are asked for the most keys")}<h2>Last transitions</h2>
${transitions}
`,
    { refreshSeconds: 2 },
  );
}
