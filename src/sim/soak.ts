/**
 * `npm run sim:soak [-- --runs N --from SEED --threads T]`: 100,000 seeded
 * clusters by default, spread over worker threads, with a progress bar and a
 * closing summary table (runs, events, faults injected by kind, failures);
 * the lowest failing seeds are listed (up to 100), and the reports of the five
 * lowest printed whole, with their replay commands. Exit code 1 if any run
 * failed.
 */

import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { SingleBar } from "cli-progress";
import { beyondExactIntegers, EXACT_INTEGER_BOUND } from "../util/exactInteger.ts";
import { formatFailure, formatSummaryTable, formatTally } from "./report.ts";
import {
  addResult,
  emptySummary,
  mergeSummary,
  type SimSummary,
  seedsPassSafeRange,
} from "./runMany.ts";
import { simulate } from "./simulation.ts";
import { soakOptions } from "./soakProfile.ts";

interface Job {
  readonly from: number;
  readonly count: number;
  readonly stride: number;
}

type FromThread =
  | { readonly kind: "progress"; readonly done: number; readonly failed: number }
  | { readonly kind: "done"; readonly summary: SimSummary; readonly failures: Failure[] };

/** A failing run's report, with its seed to order them by. */
interface Failure {
  readonly seed: number;
  readonly text: string;
}

/** How many failure reports are printed whole (and each thread keeps). */
const FAILURES_SHOWN = 5;

const USAGE =
  "usage: npm run sim:soak -- [--runs N (100000)] [--from SEED (1)] [--threads T (cores)]\n";

function runJob(job: Job, post: (m: FromThread) => void): void {
  const summary = emptySummary();
  const failures: Failure[] = [];
  const t0 = performance.now();
  let done = 0;
  let failed = 0;
  for (let i = 0; i < job.count; i++) {
    const r = simulate(soakOptions(job.from + i * job.stride));
    addResult(summary, r);
    done++;
    if (!r.ok) {
      failed++;
      // Seeds ascend within a thread: its first failures are its lowest.
      if (failures.length < FAILURES_SHOWN) failures.push({ seed: r.seed, text: formatFailure(r) });
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

/** The soak's options; a bad one is a one-line error (exit 2), not a stack. */
function parseSoakArgs(argv: string[]): { runs: number; from: number; threads: number } | "help" {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      runs: { type: "string" },
      from: { type: "string" },
      threads: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help === true) return "help";
  const int = (name: string, text: string | undefined, fallback: number, min: number): number => {
    if (text === undefined) return fallback;
    const v = Number(text);
    if (!/^\d+$/.test(text) || v < min) {
      throw new Error(`--${name} must be an integer ≥ ${min}, got ${JSON.stringify(text)}`);
    }
    // Said as every integer of the command line says it: it was "an integer ≥ 1" of one.
    if (beyondExactIntegers(v)) {
      throw new Error(`--${name} must be ${EXACT_INTEGER_BOUND}, got ${JSON.stringify(text)}`);
    }
    return v;
  };
  const runs = int("runs", values.runs, 100_000, 1);
  const from = int("from", values.from, 1, 0);
  if (seedsPassSafeRange(from, runs)) {
    throw new Error(
      `--from + --runs must stay within ${Number.MAX_SAFE_INTEGER} (seeds are safe integers)`,
    );
  }
  const threads = Math.min(int("threads", values.threads, availableParallelism(), 1), runs);
  return { runs, from, threads };
}

async function main(): Promise<number> {
  let parsed: ReturnType<typeof parseSoakArgs>;
  try {
    parsed = parseSoakArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`sim:soak: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (parsed === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  const { runs, from, threads } = parsed;
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
  const threadsRunning: Worker[] = [];
  process.once("SIGINT", () => {
    bar.stop();
    process.stdout.write(
      `sim:soak interrupted: ${done} of ${runs} seeds run from ${from}, ${failed} failed (failing seeds are listed at the end of a whole run: rerun with --from and --runs)\n`,
    );
    for (const w of threadsRunning) void w.terminate();
    process.exit(130);
  });
  const total = emptySummary();
  const failures: Failure[] = [];
  await Promise.all(
    Array.from({ length: threads }, (_, k) => {
      // Thread k runs seeds from + k, from + k + threads, …
      const count = Math.floor(runs / threads) + (k < runs % threads ? 1 : 0);
      const job: Job = { from: from + k, count, stride: threads };
      return new Promise<void>((resolve, reject) => {
        const w = new Worker(new URL("./soakThread.mjs", import.meta.url), { workerData: job });
        threadsRunning.push(w);
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
  // The lowest seeds' reports, whichever thread finished first.
  failures.sort((a, b) => a.seed - b.seed);
  for (const f of failures.slice(0, FAILURES_SHOWN)) process.stdout.write(`${f.text}\n`);
  process.stdout.write(`${formatTally(total)}\n`);
  return total.failed > 0 ? 1 : 0;
}

if (isMainThread) {
  process.exitCode = await main();
} else {
  runJob(workerData as Job, (m) => parentPort?.postMessage(m));
}
