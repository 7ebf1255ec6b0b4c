import { otherVersionNote } from "../protocol/clusterDump/versions.ts";
import { plural } from "../util/plural.ts";
import type {
  DumpReplayReport,
  LogDivergence,
  ReplayFailure,
  ReplayReport,
  StreamReplayReport,
  VectorReplayReport,
  WorkerReplayReport,
} from "./report.ts";
import { shown } from "./shownText.ts";
import type { TaskMismatch } from "./taskComparison.ts";

/** Options of {@link formatReport}. */
export interface FormatReportOptions {
  /** Most task mismatches listed per worker (the JSON report has them all). Default 20. */
  readonly maxTasks?: number;
  /** Most story records listed with a failure. Default 20. */
  readonly maxStory?: number;
}

const LABEL = 10;

function row(label: string, text: string): string {
  return `  ${label.padEnd(LABEL)}${text}`;
}

function json(v: unknown): string {
  return JSON.stringify(v) ?? "null";
}

function divergenceLines(title: string, d: LogDivergence): string[] {
  return [
    `  ${title} at event ${d.eventIndex} (${d.eventClass} ${shown(d.stimulusId)}), record ${d.recordIndex}:`,
    `    expected  ${d.expected ?? "(no more records)"}`,
    `    replayed  ${d.replayed ?? "(no more records)"}`,
  ];
}

function failureLines(f: ReplayFailure, maxStory: number): string[] {
  const [first, ...rest] = f.message.split("\n");
  const out = [
    `  error at event ${f.eventIndex} (${f.eventClass} ${f.stimulusId}): ${f.error}: ${first}`,
  ];
  // The port's InvalidTransition messages carry their own story: show it only once.
  if (rest.length > 0 && f.story.length === 0) out.push(...rest.map((l) => `    ${l}`));
  if (f.story.length > 0) {
    const shown = f.story.slice(-maxStory);
    out.push(
      `    story of the event's tasks${shown.length < f.story.length ? ` (last ${shown.length})` : ""}:`,
    );
    out.push(...shown.map((s) => `      ${s}`));
  }
  return out;
}

function mismatchLine(m: TaskMismatch): string {
  const fields = m.fields
    .filter((f) => f.field !== "state")
    .map((f) => `${f.field} ${json(f.dumped)} → ${json(f.replayed)}`);
  const states = `dumped ${m.dumped ?? "(forgotten)"}, replayed ${m.replayed ?? "(forgotten)"}`;
  return `    ${shown(m.key)}: ${states}${fields.length > 0 ? `; ${fields.join("; ")}` : ""}`;
}

/** The text block of one replayed worker. */
export function formatWorker(w: WorkerReplayReport, options: FormatReportOptions = {}): string {
  const maxTasks = options.maxTasks ?? 20;
  const partial =
    w.verdict === "uncompared"
      ? ": nothing could be compared (no record checked, no task comparable)"
      : w.coverage.stimulusLogFromStart
        ? ""
        : " as far as comparable";
  const out = [
    `${shown(w.address)}: ${w.verdict.toUpperCase()}${partial}${w.followLog ? " (--follow-log)" : ""}`,
  ];
  for (const note of w.coverage.notes) out.push(`  note: ${note}`);
  const ev = w.events;
  const extras = [
    ev.skipped > 0 ? `${ev.skipped} skipped` : "",
    ev.findMissing > 0 ? `${plural(ev.findMissing, "FindMissingEvent")} added` : "",
  ].filter(Boolean);
  out.push(
    row(
      "events",
      `${ev.replayed} of ${ev.inLog} replayed${extras.length > 0 ? ` (${extras.join(", ")})` : ""}`,
    ),
  );
  const c = w.transitionCounter;
  out.push(
    row(
      "counter",
      `${c.replayed} replayed, ${c.dumped} dumped: ${c.equal ? "equal" : c.comparable ? "DIFFERENT" : "not comparable (the stimulus log does not reach back to the worker's start)"}`,
    ),
  );
  const log = w.log;
  const parts = [`${log.equal} as dumped`];
  if (log.reordered > 0) parts.push(`${log.reordered} in another order only`);
  if (log.divergent > 0) parts.push(`${log.divergent} DIVERGENT`);
  if (log.unverifiable > 0) {
    parts.push(
      `${log.unverifiable} unverifiable (they depend on what came before the stimulus log)`,
    );
  }
  out.push(
    row(
      "log",
      `${plural(log.checkedStimuli, "stimulus", "stimuli")} checked (${plural(log.checkedRecords, "record")}): ${parts.join(", ")}`,
    ),
  );
  if (log.unexplainedRecords > 0) {
    out.push(
      row("", `${plural(log.unexplainedRecords, "dumped record")} of unknown stimuli skipped`),
    );
  }
  if (log.steered !== null) {
    out.push(
      row(
        "steered",
        `${plural(log.steered.recommendations, "recommendation")} reordered, ${plural(log.steered.gathers, "gather tie-break")} set from the dumped log`,
      ),
    );
  }
  if (log.firstDivergence !== null) {
    out.push(...divergenceLines("first divergence", log.firstDivergence));
    const d = log.firstDivergence;
    out.push(
      `    (this stimulus: ${plural(d.missing, "dumped record")} not replayed, ${plural(d.extra, "replayed record")} not dumped)`,
    );
    out.push(
      w.followLog
        ? "    --follow-log could not follow the dumped choice here: not a matter of Python's set order"
        : "    Python's set order may have chosen differently here: --follow-log follows the dumped choices",
    );
  }
  if (log.firstUnverifiable !== null && log.firstDivergence === null) {
    out.push(...divergenceLines("first unverifiable stimulus", log.firstUnverifiable));
  }
  if (w.failure !== null) out.push(...failureLines(w.failure, options.maxStory ?? 20));
  const t = w.tasks;
  const notComparable = t.notComparable > 0 ? `, ${t.notComparable} not comparable` : "";
  const counts = `(${t.dumped} dumped, ${t.replayed} replayed${notComparable})`;
  if (w.failure !== null) {
    out.push(row("tasks", `not compared: the replay stopped at event ${w.failure.eventIndex}`));
  } else if (t.mismatches.length === 0) {
    out.push(row("tasks", `${t.compared} compared: all equal ${counts}`));
  } else {
    out.push(row("tasks", `${t.mismatches.length} of ${t.compared} compared DIFFER ${counts}`));
    out.push(...t.mismatches.slice(0, maxTasks).map(mismatchLine));
    if (t.mismatches.length > maxTasks) {
      out.push(`    … and ${t.mismatches.length - maxTasks} more (--json lists them all)`);
    }
  }
  if (t.generationOffset !== 0) {
    out.push(`    (priorities compared with their generation shifted by ${t.generationOffset})`);
  }
  return out.join("\n");
}

/** The note for a worker whose dump entry is the error the dump got from it. */
export function unavailableWorkerNote(address: string, reason: string): string {
  return `note: worker ${shown(address)} is not in the dump (it did not answer: ${shown(reason)})`;
}

/** The note for a worker the scheduler lists and the dump holds no entry for. */
export function workerWithoutEntryNote(address: string): string {
  return `note: the scheduler lists worker ${shown(address)}, which the dump holds no entry for (is the file cut short?)`;
}

function formatDump(r: DumpReplayReport, options: FormatReportOptions): string {
  const version = r.distributed === null ? "" : `, distributed ${shown(r.distributed)}`;
  const out = [
    `${shown(r.file)}: cluster dump (${r.encoding}${version}), ${plural(r.workers.length, "worker")} replayed`,
  ];
  const versionNote = otherVersionNote(r.distributed);
  if (versionNote !== null)
    out.push(`note: ${versionNote}: a difference may come from the versions`);
  for (const u of r.unavailableWorkers) {
    out.push(unavailableWorkerNote(u.address, u.reason));
  }
  for (const a of r.workersWithoutEntry) out.push(workerWithoutEntryNote(a));
  for (const w of r.workers) out.push("", formatWorker(w, options));
  const tally = new Map<string, number>();
  for (const w of r.workers) tally.set(w.verdict, (tally.get(w.verdict) ?? 0) + 1);
  const summary = [...tally].map(([v, n]) => `${n} ${v}`).join(", ");
  out.push("", `${plural(r.workers.length, "worker")}: ${summary || "none"}`);
  if (r.workers.some((w) => w.followLog && w.verdict === "converged")) {
    out.push(
      "with --follow-log, a converged log diverged where Python's set order cannot explain it: a real difference",
    );
  }
  if (!r.ok && r.workers.some((w) => !w.followLog && w.log.firstDivergence !== null)) {
    out.push("hint: rerun with --follow-log to follow the choices of the dumped log");
  }
  return out.join("\n");
}

function formatVector(r: VectorReplayReport): string {
  const head = `${shown(r.file)}: conformance vector ${shown(r.name)} (${plural(r.steps, "step")})`;
  if (r.skipped) return `${head}\nSKIPPED: the vector is order-sensitive`;
  if (r.mismatch === null) {
    const counter =
      r.transitionCounter === null ? "" : `, transition counter ${r.transitionCounter}`;
    return `${head}\nPASSED: every step as recorded${counter}`;
  }
  const m = r.mismatch;
  return [
    head,
    `FAILED at step ${m.step} (${m.what})`,
    `  event: ${m.event.slice(0, 400)}`,
    ...m.details.map((d) => `    ${d.slice(0, 400)}`),
  ].join("\n");
}

function formatStream(r: StreamReplayReport, options: FormatReportOptions): string {
  const out = [`${shown(r.file)}: stimulus stream ${shown(r.name)}`];
  out.push(
    row(
      "replayed",
      `${plural(r.events, "event")}, ${plural(r.instructions, "instruction")}, ${plural(r.transitionCounter, "transition")}, ${plural(r.tasks, "task")} held`,
    ),
  );
  if (r.failure !== null) out.push(...failureLines(r.failure, options.maxStory ?? 20));
  if (r.final === null) {
    out.push(row("final", "the stream has no final line (cut short?): nothing to check"));
  } else if (r.failure !== null) {
    // The counts of a replay that stopped early say nothing about the reference's.
    out.push(row("final", `not compared: the replay stopped at event ${r.failure.eventIndex}`));
  } else if (r.finalMismatches.length === 0) {
    out.push(row("final", "as the reference produced"));
  } else {
    out.push(row("final", "DIFFERENT from what the reference produced"));
    out.push(...r.finalMismatches.map((m) => `    ${m}`));
  }
  // A bare OK would claim an agreement that a stream without its final line cannot show.
  const ok =
    r.final === null
      ? "OK as far as checked: the machine took every event, nothing compared"
      : "OK";
  out.push(r.ok ? ok : "FAILED");
  return out.join("\n");
}

/** A replay report as readable text (no trailing newline). */
export function formatReport(r: ReplayReport, options: FormatReportOptions = {}): string {
  switch (r.kind) {
    case "dump":
      return formatDump(r, options);
    case "vector":
      return formatVector(r);
    case "stream":
      return formatStream(r, options);
  }
}
