/**
 * `Client.performanceReport` (Dask's `performance_report`): run some code, then
 * write one self-contained HTML file of what the cluster did meanwhile: the
 * task stream of the whole run, where the time went by task prefix and by
 * worker, and the scheduler's counts. No scripts or assets: the file opens
 * anywhere, and can be mailed or attached to an issue.
 */

import type { SchedulerCounters, TaskStreamRecord } from "../protocol/messagesSession.ts";
import { prefixColour, taskStreamSvg } from "../scheduler/statusCharts.ts";
import { escapeHtml, Html, htmlPage, htmlTable as table } from "../util/html.ts";
import { keySplit } from "../util/keySplit.ts";
import { checkKnownOptions } from "../util/knownOptions.ts";
import { plural } from "../util/plural.ts";
import { showValue } from "../util/showValue.ts";
import { writeWholeFile } from "../util/wholeFile.ts";
import { checkProfileSettings } from "../worker/profiler.ts";
import { PERFORMANCE_REPORT_OPTIONS, PROFILE_SETTINGS_OPTIONS } from "./optionNames.ts";
import { busyMs, type ClusterProfile, type ProfileOptions } from "./profile.ts";
import { checkWritablePath, writing } from "./writablePath.ts";

/** What the report is made of. */
export interface PerformanceReportData {
  /** Wall-clock seconds: when the code started and ended. */
  readonly start: number;
  readonly stop: number;
  readonly scheduler: string;
  /** The workers at the end: address and threads. */
  readonly workers: readonly { readonly address: string; readonly nthreads: number }[];
  /** The task runs reported meanwhile (the task stream since `start`). */
  readonly runs: readonly TaskStreamRecord[];
  /** The scheduler's counters before and after. */
  readonly before: SchedulerCounters;
  readonly after: SchedulerCounters;
  /** Whether the code threw (the report is written all the same). */
  readonly failed: boolean;
  /** The workers' CPU profile meanwhile, if asked for (`{ profile: true }`). */
  readonly profile?: Omit<ClusterProfile<unknown>, "value">;
}

/** Options of `Client.performanceReport`. */
export interface PerformanceReportOptions {
  /**
   * Also profile the workers' threads meanwhile (`Client.profile`): the
   * report then says where their CPU went, by thread and by function, and
   * links the merged `.cpuprofile`. `true`, or `Client.profile`'s
   * `intervalUs` and `maxMs`. Default false: profiling costs a little.
   */
  readonly profile?: boolean | Pick<ProfileOptions, "intervalUs" | "maxMs">;
}

/** The profile is linked from the report (as a data: URL) up to this size. */
const MAX_LINKED_PROFILE_BYTES = 16 * 1024 * 1024;

/** The report's section on the workers' CPU profile. */
function profileSection(p: Omit<ClusterProfile<unknown>, "value">): string {
  const busy = busyMs(p.threads);
  const threads = table(
    ["thread", "sampled s", "busy s", "busy"],
    p.threads.map((t) => [
      `${t.worker} ${t.thread}`,
      sec(t.sampledMs / 1000),
      sec((t.sampledMs - t.idleMs) / 1000),
      t.sampledMs > 0 ? `${(((t.sampledMs - t.idleMs) / t.sampledMs) * 100).toFixed(1)}%` : "",
    ]),
  );
  const functions = table(
    ["function", "where", "self s", "share of busy"],
    p.top
      .slice(0, 25)
      .map((f) => [
        f.functionName,
        f.url === "" ? "" : `${f.url}${f.line > 0 ? `:${f.line}` : ""}`,
        sec(f.selfMs / 1000),
        busy > 0 ? `${((f.selfMs / busy) * 100).toFixed(1)}%` : "",
      ]),
  );
  const json = JSON.stringify(p.profile);
  const link =
    json.length <= MAX_LINKED_PROFILE_BYTES
      ? `<p><a download="weft.cpuprofile" href="data:application/json;base64,${Buffer.from(json).toString("base64")}">the merged profile</a> (.cpuprofile: Chrome DevTools' Performance panel, VS Code, speedscope)</p>`
      : `<p class="note">the merged profile (${json.length} bytes) is too large to link from here: take it with <code>client.profile</code>.</p>`;
  const lost =
    (p.lostThreads > 0
      ? `<p class="note">${plural(p.lostThreads, "pool thread")} ended while profiled: their samples are lost.</p>`
      : "") +
    p.failedWorkers
      .map(
        (f) => `<p class="note">no profile of ${escapeHtml(f.worker)}: ${escapeHtml(f.reason)}</p>`,
      )
      .join("");
  return `<h2>CPU profile of the workers' threads</h2>
${threads}
${lost}<h3>Where the busy time went, by function (self time)</h3>
${functions}
${link}`;
}

/** Seconds of a run spent in `action`. */
function secondsIn(r: TaskStreamRecord, action: string): number {
  let s = 0;
  for (const ss of r.startstops) if (ss.action === action) s += ss.stop - ss.start;
  return s;
}

/** Seconds to three decimals. */
function sec(s: number): string {
  return s.toFixed(3);
}

/** The HTML of the report. */
export function renderPerformanceReport(d: PerformanceReportData): string {
  const duration = Math.max(d.stop - d.start, 0);
  const byPrefix = new Map<
    string,
    { runs: number; erred: number; compute: number; max: number; transfer: number }
  >();
  const byWorker = new Map<string, { runs: number; compute: number; transfer: number }>();
  for (const r of d.runs) {
    const prefix = keySplit(r.key);
    const compute = secondsIn(r, "compute");
    const transfer = secondsIn(r, "transfer");
    let p = byPrefix.get(prefix);
    if (p === undefined)
      byPrefix.set(prefix, (p = { runs: 0, erred: 0, compute: 0, max: 0, transfer: 0 }));
    p.runs++;
    if (r.status === "error") p.erred++;
    p.compute += compute;
    p.max = Math.max(p.max, compute);
    p.transfer += transfer;
    let w = byWorker.get(r.worker);
    if (w === undefined) byWorker.set(r.worker, (w = { runs: 0, compute: 0, transfer: 0 }));
    w.runs++;
    w.compute += compute;
    w.transfer += transfer;
  }
  const threads = new Map(d.workers.map((w) => [w.address, w.nthreads]));
  // Workers that ran nothing are listed too: idle threads are what a report is for.
  for (const w of d.workers) {
    if (!byWorker.has(w.address)) byWorker.set(w.address, { runs: 0, compute: 0, transfer: 0 });
  }
  const totalCompute = [...byPrefix.values()].reduce((s, p) => s + p.compute, 0);
  const prefixes = table(
    [
      "prefix",
      "runs",
      "erred",
      "compute s",
      "mean s",
      "max s",
      "waiting for transfers s",
      "share of compute",
    ],
    [...byPrefix]
      .sort((a, b) => b[1].compute - a[1].compute)
      .map(([prefix, p]) => [
        new Html(
          `<span class="key" style="background:${prefixColour(prefix)}"></span>${escapeHtml(prefix)}`,
        ),
        String(p.runs),
        String(p.erred),
        sec(p.compute),
        sec(p.compute / p.runs),
        sec(p.max),
        sec(p.transfer),
        totalCompute > 0 ? `${((p.compute / totalCompute) * 100).toFixed(1)}%` : "",
      ]),
  );
  const workers = table(
    ["worker", "threads", "runs", "compute s", "waiting for transfers s", "busy"],
    [...byWorker]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([address, w]) => {
        const n = threads.get(address);
        const busy = n !== undefined && duration > 0 ? w.compute / (duration * n) : null;
        return [
          address,
          n === undefined ? "gone" : String(n),
          String(w.runs),
          sec(w.compute),
          sec(w.transfer),
          busy === null ? "" : `${(busy * 100).toFixed(1)}%`,
        ];
      }),
  );
  const finished = d.after.tasksFinished - d.before.tasksFinished;
  const erred = d.after.tasksErred - d.before.tasksErred;
  const transferred = d.after.keysTransferred - d.before.keysTransferred;
  const reported = finished + erred;
  const missing =
    reported > d.runs.length
      ? `<p class="note">${reported - d.runs.length} of the ${reported} runs reported are not in the task stream: the scheduler keeps its last <code>taskStreamLength</code> (100,000) runs.</p>`
      : "";
  const startedAt = new Date(d.start * 1000).toISOString();
  const stream =
    taskStreamSvg(d.runs, d.start, d.stop, {
      tick: (t) => `${sec(t)} s`,
      label: `task stream of the ${sec(duration)} s of the report`,
    }) ?? "<p>no task ran.</p>";
  const totalThreads = d.workers.reduce((s, w) => s + w.nthreads, 0);
  return htmlPage(
    `weft performance report ${startedAt}`,
    `<p>${escapeHtml(startedAt)}, ${sec(duration)} s${d.failed ? " (the code reported on threw)" : ""}; scheduler ${escapeHtml(d.scheduler)}, ${d.workers.length} workers, ${totalThreads} threads at the end.</p>
<p>${plural(finished, "task run")} finished, ${erred} erred, ${plural(transferred, "key")} transferred between workers; ${sec(totalCompute)} s of compute${duration > 0 && totalThreads > 0 ? ` (${((totalCompute / (duration * totalThreads)) * 100).toFixed(1)}% of the threads' time)` : ""}.</p>
${missing}<h2>Task stream</h2>
${stream}
<p class="legend">computes coloured by prefix (black: erred); red: transfers of their inputs; orange: disk reads. Hover a bar for its key and seconds.</p>
<h2>By task prefix</h2>
${prefixes}
<h2>By worker</h2>
${workers}
${d.profile === undefined ? "" : profileSection(d.profile)}
`,
    { heading: "weft performance report" },
  );
}

/** Where {@link Client.performanceReport} gets what it reports. */
export interface ReportSource {
  readonly address: string;
  counters(): Promise<SchedulerCounters>;
  workers(): Promise<readonly { readonly address: string; readonly nthreads: number }[]>;
  getTaskStream(options: { readonly since?: number }): Promise<TaskStreamRecord[]>;
  profile<T>(body: () => T | Promise<T>, options: ProfileOptions): Promise<ClusterProfile<T>>;
}

/**
 * Run `body`, then write the report of what the cluster did meanwhile to
 * `path`, also when `body` throws (its error is then rethrown). Resolves with
 * what `body` gives.
 */
export async function performanceReport<T>(
  source: ReportSource,
  path: string | URL,
  body: () => T | Promise<T>,
  options: PerformanceReportOptions = {},
): Promise<T> {
  if (typeof path !== "string" && !(path instanceof URL)) {
    throw new TypeError(
      `performanceReport: path must be a file path or a file: URL, got ${showValue(path)}`,
    );
  }
  if (typeof body !== "function") {
    throw new TypeError(
      `performanceReport: expected the code to report on, as a function, got ${showValue(body)}`,
    );
  }
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`performanceReport: options must be an object, got ${showValue(options)}`);
  }
  checkKnownOptions("performanceReport", options, PERFORMANCE_REPORT_OPTIONS);
  const profiling = options.profile ?? false;
  if (typeof profiling !== "boolean") {
    if (profiling === null || typeof profiling !== "object" || Array.isArray(profiling)) {
      throw new TypeError(
        `performanceReport: profile must be a boolean or {intervalUs, maxMs}, got ${showValue(profiling)}`,
      );
    }
    checkKnownOptions("performanceReport: profile", profiling, PROFILE_SETTINGS_OPTIONS);
    checkProfileSettings("performanceReport: profile", profiling.intervalUs, profiling.maxMs);
  }
  // Before the code runs: a report that could not be written after it would take its value along.
  await checkWritablePath("performanceReport", path);
  const before = await source.counters();
  const start = Date.now() / 1000;
  if (profiling === false) {
    let result: T;
    try {
      result = await body();
    } catch (err) {
      await writeReport(source, path, before, start, true).catch(() => {});
      throw err;
    }
    await writeReport(source, path, before, start, false);
    return result;
  }
  // The code's error is kept aside, so that the profile is not lost with it.
  let failure: { readonly error: unknown } | null = null;
  const profiled = await source.profile(
    async (): Promise<T | undefined> => {
      try {
        return await body();
      } catch (error) {
        failure = { error };
        return undefined;
      }
    },
    profiling === true ? {} : profiling,
  );
  const { value, ...profile } = profiled;
  await writeReport(source, path, before, start, failure !== null, profile).catch((err) => {
    if (failure === null) throw err;
  });
  if (failure !== null) throw (failure as { readonly error: unknown }).error;
  return value as T;
}

async function writeReport(
  source: ReportSource,
  path: string | URL,
  before: SchedulerCounters,
  start: number,
  failed: boolean,
  profile?: Omit<ClusterProfile<unknown>, "value">,
): Promise<void> {
  const stop = Date.now() / 1000;
  const [after, workers, runs] = await Promise.all([
    source.counters(),
    source.workers(),
    source.getTaskStream({ since: start }),
  ]);
  const html = renderPerformanceReport({
    start,
    stop,
    scheduler: source.address,
    workers: workers.map((w) => ({ address: w.address, nthreads: w.nthreads })),
    runs,
    before,
    after,
    failed,
    ...(profile !== undefined ? { profile } : {}),
  });
  await writing("performanceReport", path, () => writeWholeFile(path, html));
}
