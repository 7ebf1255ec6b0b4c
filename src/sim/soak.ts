/**
 * `npm run sim:soak [-- --runs N --from SEED --threads T]`: 100,000 seeded
 * clusters by default, spread over worker threads, with a progress bar and a
 * closing summary table (runs, events, faults injected by kind, failures);
 * every failing seed is listed with its replay command. Exit code 1 if any
 * run failed.
 */

import { availableParallelism } from "node:os";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { SingleBar } from "cli-progress";
import { formatFailure, formatSummaryTable, formatTally } from "./report.ts";
import { addResult, emptySummary, mergeSummary, type SimSummary } from "./runMany.ts";
import { simulate } from "./simulation.ts";
import { soakOptions } from "./soakProfile.ts";

interface Job {
  readonly from: number;
  readonly count: number;
  readonly stride: number;
}

type FromThread =
  | { readonly kind: "progress"; readonly done: number; readonly failed: number }
  | { readonly kind: "done"; readonly summary: SimSummary; readonly failures: string[] };

function runJob(job: Job, post: (m: FromThread) => void): void {
  const summary = emptySummary();
  const failures: string[] = [];
  const t0 = performance.now();
  let done = 0;
  let failed = 0;
  for (let i = 0; i < job.count; i++) {
    const r = simulate(soakOptions(job.from + i * job.stride));
    addResult(summary, r);
    done++;
    if (!r.ok) {
      failed++;
      if (failures.length < 20) failures.push(formatFailure(r));
    }
    if (done % 50 === 0) {
      post({ kind: "progress", done, failed });
      done = 0;
      failed = 0;
    }
  }
  post({ kind: "progress", done, failed });
  summary.firstFailure = null; // results do not cross threads; the texts do
  summary.wallSeconds = (performance.now() - t0) / 1000;
  post({ kind: "done", summary, failures });
}

function flag(args: readonly string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const v = Number(args[i + 1]);
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${name} needs an integer ≥ 0`);
  return v;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes("--help")) {
    process.stdout.write(
      "usage: npm run sim:soak -- [--runs N (100000)] [--from SEED (1)] [--threads T (cores)]\n",
    );
    return 0;
  }
  const runs = flag(args, "--runs", 100_000);
  const from = flag(args, "--from", 1);
  const threads = Math.max(1, Math.min(flag(args, "--threads", availableParallelism()), runs));
  const t0 = performance.now();
  const bar = new SingleBar({
    format:
      "soak [{bar}] {percentage}% | {value}/{total} seeds | {failed} failed | {eta_formatted}",
    hideCursor: true,
    // Off a terminal (CI, a log file), print the bar every 30 s.
    noTTYOutput: true,
    notTTYSchedule: 30_000,
  });
  bar.start(runs, 0, { failed: 0 });
  let done = 0;
  let failed = 0;
  const total = emptySummary();
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: threads }, (_, k) => {
      // Thread k runs seeds from + k, from + k + threads, …
      const count = Math.floor(runs / threads) + (k < runs % threads ? 1 : 0);
      const job: Job = { from: from + k, count, stride: threads };
      return new Promise<void>((resolve, reject) => {
        const w = new Worker(new URL("./soakThread.mjs", import.meta.url), { workerData: job });
        w.on("message", (m: FromThread) => {
          if (m.kind === "progress") {
            done += m.done;
            failed += m.failed;
            bar.update(done, { failed });
          } else {
            mergeSummary(total, m.summary);
            failures.push(...m.failures);
          }
        });
        w.on("error", reject);
        w.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`thread exit ${code}`))));
      });
    }),
  );
  bar.stop();
  total.wallSeconds = (performance.now() - t0) / 1000;
  process.stdout.write(`${formatSummaryTable(total)}\n`);
  for (const f of failures.slice(0, 5)) process.stdout.write(`${f}\n`);
  process.stdout.write(`${formatTally(total)}\n`);
  return total.failed > 0 ? 1 : 0;
}

if (isMainThread) {
  process.exitCode = await main();
} else {
  runJob(workerData as Job, (m) => parentPort?.postMessage(m));
}
