/**
 * The pictures of the scheduler's `/status` page, drawn on the server as HTML
 * and SVG (no scripts): a progress bar of each task prefix, usage bars of the
 * workers, and the task stream (Dask's dashboard draws the same three with
 * Bokeh). Hovering a piece shows its numbers (`title`).
 */

import type { TaskStreamRecord } from "../protocol/messagesSession.ts";
import { cutText } from "../util/cutText.ts";
import { cssPercent, escapeHtml } from "../util/html.ts";
import { keySplit } from "../util/keySplit.ts";
import { topRows } from "../util/topRows.ts";
import type { SchedulerTaskStateName } from "./state/taskState.ts";

/**
 * The segments of a prefix's progress bar, left to right, with their colour:
 * Dask's progress bars (done, erred, processing, the rest to go), waiting
 * states split out so that a stuck graph shows where it is stuck.
 */
const PROGRESS_SEGMENTS: readonly {
  readonly state: SchedulerTaskStateName;
  readonly colour: string;
}[] = [
  { state: "memory", colour: "#3b7dd8" },
  { state: "erred", colour: "#d62728" },
  { state: "processing", colour: "#2ca02c" },
  { state: "queued", colour: "#98df8a" },
  { state: "no-worker", colour: "#ff7f0e" },
  { state: "waiting", colour: "#c7c7c7" },
  { state: "released", colour: "#eeeeee" },
];

/** A prefix's tasks by state as one stacked bar, and "done / total" beside it. */
export function progressBar(
  counts: Readonly<Partial<Record<SchedulerTaskStateName, number>>>,
): string {
  let total = 0;
  for (const { state } of PROGRESS_SEGMENTS) total += counts[state] ?? 0;
  const segments = PROGRESS_SEGMENTS.filter(({ state }) => (counts[state] ?? 0) > 0).map(
    ({ state, colour }) => {
      const n = counts[state] ?? 0;
      return `<span style="width:${cssPercent(n, total)};background:${colour}" title="${state}: ${n}"></span>`;
    },
  );
  const done = counts.memory ?? 0;
  return `<span class="bar">${segments.join("")}</span> ${done} / ${total}`;
}

/** The colours of the progress bars, for the page's legend. */
export function progressLegend(): string {
  return PROGRESS_SEGMENTS.map(
    ({ state, colour }) => `<span class="key" style="background:${colour}"></span>${state}`,
  ).join(" ");
}

/** A stable colour for a task prefix: its name hashed to a hue. */
export function prefixColour(prefix: string): string {
  let h = 0;
  for (let i = 0; i < prefix.length; i++) h = (Math.imul(h, 31) + prefix.charCodeAt(i)) | 0;
  return `hsl(${(h >>> 0) % 360},60%,55%)`;
}

/** What the task stream draws of each kind of interval that is not a compute. */
const ACTION_COLOURS: ReadonlyMap<string, string> = new Map([
  ["transfer", "#d62728"],
  ["disk-read", "#ff7f0e"],
  ["disk-write", "#ff7f0e"],
  ["deserialize", "#7f7f7f"],
]);

/** One bar of the task stream: an interval of a run, on a lane of a worker. */
interface StreamBar {
  readonly start: number;
  readonly stop: number;
  readonly colour: string;
  /** What bars merge with it ({@link mergeClose}): its prefix and action. */
  readonly kind: string;
  readonly title: string;
  readonly seconds: number;
}

/**
 * Bars of one worker on lanes, each bar on the first lane free at its start:
 * a worker computing on n threads at once fills n lanes.
 */
export function packLanes<T extends { readonly start: number; readonly stop: number }>(
  bars: readonly T[],
): T[][] {
  const lanes: T[][] = [];
  const laneEnds: number[] = [];
  const sorted = [...bars].sort((a, b) => a.start - b.start || a.stop - b.stop);
  for (const bar of sorted) {
    let lane = laneEnds.findIndex((end) => end <= bar.start);
    if (lane < 0) {
      lane = lanes.length;
      lanes.push([]);
      laneEnds.push(bar.stop);
    }
    lanes[lane].push(bar);
    laneEnds[lane] = bar.stop;
  }
  return lanes;
}

/** Geometry of the task stream picture, in pixels. */
const STREAM = { width: 900, label: 170, lane: 10, gap: 4, axis: 18 } as const;

/** The spans the task stream zooms to, in seconds. */
const SPANS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600] as const;

/**
 * The seconds the task stream spans: the shortest of {@link SPANS} holding
 * every interval drawn (so that a burst of short tasks is not a sliver at the
 * right edge), at most `maxSeconds`.
 */
export function streamSpan(
  records: readonly TaskStreamRecord[],
  now: number,
  maxSeconds: number,
): number {
  let earliest = now;
  for (const r of records) {
    for (const ss of r.startstops) {
      if (ss.stop >= now - maxSeconds && ss.start < earliest) earliest = ss.start;
    }
  }
  const needed = now - earliest;
  return Math.min(SPANS.find((s) => s >= needed) ?? maxSeconds, maxSeconds);
}

/**
 * The task stream of the last seconds before `now` (wall-clock seconds), up to
 * `maxSeconds` ({@link streamSpan}), as {@link taskStreamSvg} draws it, the
 * axis in seconds before now.
 */
export function recentTaskStreamSvg(
  records: readonly TaskStreamRecord[],
  now: number,
  maxSeconds: number,
  maxWorkers = Number.POSITIVE_INFINITY,
): string {
  const span = streamSpan(records, now, maxSeconds);
  return (
    taskStreamSvg(
      records,
      now - span,
      now,
      {
        tick: (t) => (t === span ? "now" : `-${span - t} s`),
        label: `task stream of the last ${span} s`,
      },
      maxWorkers,
    ) ?? `<p>no task ran in the last ${maxSeconds} s</p>`
  );
}

/**
 * The most characters of a key a bar names on hover: the picture has a bar
 * for each of up to thousands of runs, and 2,000 runs of 1,000-character keys
 * made a picture of 2.2 MB.
 */
const TITLE_KEY_CHARS = 100;

/** How {@link taskStreamSvg} labels its picture. */
export interface StreamLabels {
  /** The text of the axis's tick `t` seconds after the window's start. */
  readonly tick: (t: number) => string;
  /** What the picture shows, for screen readers. */
  readonly label: string;
}

/**
 * The task stream between `from` and `to` (wall-clock seconds): a row of
 * lanes per worker, a bar per compute (coloured by prefix; black where it
 * erred) and per transfer or disk read it waited for, as Dask's task stream.
 * Intervals outside the window are left out, those across its edges cut.
 * Neighbouring bars of one kind closer than a pixel are drawn as one (saying
 * how many), so that thousands of short tasks make a picture of bounded size.
 * At most `maxWorkers` workers are drawn, the busiest (the most seconds of
 * bars in the window), with a line saying how many more there were: a
 * thousand workers' lanes are a picture of tens of thousands of pixels.
 * Null when nothing ran in the window.
 */
export function taskStreamSvg(
  records: readonly TaskStreamRecord[],
  from: number,
  to: number,
  labels: StreamLabels,
  maxWorkers = Number.POSITIVE_INFINITY,
): string | null {
  const span = to - from;
  if (!(span > 0)) return null;
  const byWorker = new Map<string, StreamBar[]>();
  for (const r of records) {
    const prefix = keySplit(r.key);
    const key = cutText(r.key, TITLE_KEY_CHARS);
    for (const ss of r.startstops) {
      if (ss.stop < from || ss.start > to || ss.stop < ss.start) continue;
      const compute = ss.action === "compute";
      const erred = r.status === "error";
      let bars = byWorker.get(r.worker);
      if (bars === undefined) byWorker.set(r.worker, (bars = []));
      bars.push({
        start: Math.max(ss.start, from),
        stop: Math.min(ss.stop, to),
        colour: compute
          ? erred
            ? "#000000"
            : prefixColour(prefix)
          : (ACTION_COLOURS.get(ss.action) ?? "#7f7f7f"),
        kind: compute ? `${prefix}${erred ? " (erred)" : ""}` : `${ss.action} for ${prefix}`,
        title: `${compute ? `${key} (${r.status})` : `${ss.action} for ${key}`}: ${(ss.stop - ss.start).toFixed(4)} s`,
        seconds: ss.stop - ss.start,
      });
    }
  }
  if (byWorker.size === 0) return null;
  const plot = STREAM.width - STREAM.label;
  const x = (t: number) => STREAM.label + ((t - from) / span) * plot;
  const parts: string[] = [];
  let y = 0;
  const busiest = [...byWorker].map(([worker, bars]) => ({
    worker,
    busy: bars.reduce((sum, bar) => sum + (bar.stop - bar.start), 0),
  }));
  const workers = topRows(busiest, maxWorkers, (w) => [w.busy])
    .shown.map((w) => w.worker)
    .sort();
  const more = byWorker.size - workers.length;
  for (const worker of workers) {
    const lanes = packLanes(byWorker.get(worker) ?? []);
    const height = lanes.length * STREAM.lane;
    parts.push(
      `<text x="0" y="${y + Math.min(height, STREAM.lane) - 1}" font-size="10">${workerLabel(worker)}</text>`,
    );
    for (const [i, lane] of lanes.entries()) {
      for (const run of mergeClose(lane, x)) {
        const left = x(run.start);
        const w = Math.max(x(run.stop) - left, 1);
        const title =
          run.count === 1
            ? run.title
            : `${run.count} × ${run.kind}: ${run.seconds.toFixed(4)} s in all`;
        parts.push(
          `<rect x="${left.toFixed(1)}" y="${y + i * STREAM.lane}" width="${w.toFixed(1)}" height="${STREAM.lane - 1}" fill="${run.colour}"><title>${escapeHtml(title)}</title></rect>`,
        );
      }
    }
    y += height + STREAM.gap;
  }
  for (let i = 0; i <= 4; i++) {
    const at = STREAM.label + (plot * i) / 4;
    const anchor = i === 0 ? "start" : i === 4 ? "end" : "middle";
    parts.push(
      `<text x="${at}" y="${y + STREAM.axis - 4}" font-size="10" text-anchor="${anchor}">${escapeHtml(labels.tick((span * i) / 4))}</text>`,
    );
  }
  const total = y + STREAM.axis;
  const note =
    more === 0
      ? ""
      : `\n<p class="note">and ${more} more workers ran tasks in this window, not drawn: those drawn are the ${workers.length} busiest</p>`;
  return `<svg class="stream" width="${STREAM.width}" height="${total}" viewBox="0 0 ${STREAM.width} ${total}" role="img" aria-label="${escapeHtml(labels.label)}">${parts.join("")}</svg>${note}`;
}

/** The most characters of a worker's label: what fits the 170 px before the bars at 10 px type. */
const LABEL_CHARS = 30;

/**
 * A worker's label, as the markup of its `<text>`: a longer address (a cloud
 * host's name) cut in the middle, keeping its start and port, all of it on hover.
 */
function workerLabel(worker: string): string {
  if (worker.length <= LABEL_CHARS) return escapeHtml(worker);
  const head = Math.floor((LABEL_CHARS - 1) / 2);
  const cut = `${worker.slice(0, head)}…${worker.slice(head + 1 - LABEL_CHARS)}`;
  return `<title>${escapeHtml(worker)}</title>${escapeHtml(cut)}`;
}

/** Bars of a lane drawn as one: how many, and their seconds in all. */
interface MergedBar extends StreamBar {
  readonly count: number;
}

/** The bars of a lane (in order), those of one kind less than a pixel apart merged. */
function mergeClose(lane: readonly StreamBar[], x: (t: number) => number): MergedBar[] {
  const out: MergedBar[] = [];
  for (const bar of lane) {
    const last = out.at(-1);
    if (last !== undefined && last.kind === bar.kind && x(bar.start) - x(last.stop) < 1) {
      out[out.length - 1] = {
        ...last,
        stop: Math.max(last.stop, bar.stop),
        count: last.count + 1,
        seconds: last.seconds + bar.seconds,
      };
    } else {
      out.push({ ...bar, count: 1 });
    }
  }
  return out;
}
