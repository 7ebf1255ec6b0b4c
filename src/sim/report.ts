/** Text reports of runs: one line per run, a failure in full, and the summary table of many runs. */

import { plural } from "../util/plural.ts";
import { FAULT_KINDS } from "./faults.ts";
import type { SimSummary } from "./runMany.ts";
import type { ShrinkResult } from "./shrink.ts";
import type { SimResult } from "./simulation.ts";
import { ACTOR_COUNTS, REPLICATE_COUNTS, SCATTER_COUNTS } from "./stats.ts";

/** `seed 7: ok random(40), 4 workers, 412 events, t=1.23s[, restarted][, 1 worker restarted], faults: death 1, steal 3`. */
export function formatRunLine(r: SimResult): string {
  const faults = FAULT_KINDS.filter((k) => r.stats.faults[k] > 0)
    .map((k) => `${k} ${r.stats.faults[k]}`)
    .join(", ");
  const head = `seed ${r.seed}: ${r.ok ? "ok" : `FAILED (${r.failure?.kind})`}`;
  return (
    `${head} ${r.workload}, ${plural(r.workers, "worker")}, ${plural(r.stats.events, "event")}, ` +
    `t=${r.stats.virtualTime.toFixed(2)}s${r.stats.restarts > 0 ? ", restarted" : ""}` +
    `${r.stats.workerRestarts > 0 ? `, ${plural(r.stats.workerRestarts, "worker")} restarted` : ""}` +
    `${faults === "" ? "" : `, faults: ${faults}`}`
  );
}

/** A failing run in full: what failed, the stories, and the command that replays it. */
export function formatFailure(r: SimResult): string {
  if (r.failure === null) return formatRunLine(r);
  const lines = [formatRunLine(r), `  ${r.failure.message}`];
  if (r.failure.details !== "") {
    for (const line of r.failure.details.split("\n")) lines.push(`  ${line}`);
  }
  lines.push(`  replay: ${r.command}`);
  lines.push(`  inspect: ${r.command} --dump run.msgpack.gz, then weft story KEY run.msgpack.gz`);
  return lines.join("\n");
}

/** The shrinker's outcome: the smallest failing case and how to replay it. */
export function formatShrink(s: ShrinkResult): string {
  if (s.smallest === s.original) {
    return `shrinking: no smaller failing case found (${plural(s.tried, "run")} tried)`;
  }
  return (
    `smallest failing case (${plural(s.tried, "run")} tried): ${formatRunLine(s.smallest)}\n` +
    `  ${s.smallest.failure?.message ?? ""}\n  replay: ${s.smallest.command}`
  );
}

function row(cells: readonly string[], widths: readonly number[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
}

/**
 * The summary table of many runs: runs, events, runs whose client restarted
 * the cluster, faults injected by kind, steals requested and confirmed,
 * replicas the Active Memory Manager dropped, the
 * `scatter` workload's counters (when it ran: the total, and in how many runs)
 * and those of its `replicate` and `rebalance` requests (when there were any),
 * the actors' counters (when the workloads had actors), failures by kind.
 */
export function formatSummaryTable(s: SimSummary): string {
  const rows: [string, string][] = [
    ["runs", String(s.runs)],
    ["passed", String(s.passed)],
    ["failed", String(s.failed)],
    ["events", String(s.events)],
    ["events / run", s.runs > 0 ? (s.events / s.runs).toFixed(0) : "0"],
    ["tasks", String(s.tasks)],
    ["wall seconds", s.wallSeconds.toFixed(1)],
    ["runs / second", s.wallSeconds > 0 ? (s.runs / s.wallSeconds).toFixed(1) : "-"],
  ];
  rows.push(["restarted runs", String(s.restartedRuns)]);
  rows.push(["runs restarting a worker", String(s.workerRestartedRuns)]);
  for (const k of FAULT_KINDS) rows.push([`fault: ${k}`, String(s.faults[k])]);
  rows.push(["steals requested", String(s.stealsRequested)]);
  rows.push(["steals confirmed", String(s.stealsConfirmed)]);
  rows.push(["replicas dropped (AMM)", String(s.replicasDropped)]);
  if (s.scatter.values > 0) {
    for (const k of SCATTER_COUNTS) {
      rows.push([`scatter: ${k}`, `${s.scatter[k]} in ${plural(s.scatterRuns[k], "run")}`]);
    }
  }
  if (s.replicate.requests > 0 || s.replicate.rebalances > 0 || s.replicate.retirements > 0) {
    for (const k of REPLICATE_COUNTS) {
      rows.push([`replicate: ${k}`, `${s.replicate[k]} in ${plural(s.replicateRuns[k], "run")}`]);
    }
  }
  if (s.actors.actors > 0) {
    for (const k of ACTOR_COUNTS) {
      rows.push([`actors: ${k}`, `${s.actors[k]} in ${plural(s.actorRuns[k], "run")}`]);
    }
  }
  for (const [k, v] of Object.entries(s.failures)) rows.push([`failure: ${k}`, String(v)]);
  const widths = [
    Math.max(...rows.map((r) => r[0].length)),
    Math.max(...rows.map((r) => r[1].length)),
  ];
  const out = rows.map((r) => row(r, widths));
  if (s.failingSeeds.length > 0) out.push(`failing seeds: ${s.failingSeeds.join(" ")}`);
  return out.join("\n");
}

/** `N passed, M failed`. */
export function formatTally(s: SimSummary): string {
  return `${s.passed} passed, ${s.failed} failed`;
}
