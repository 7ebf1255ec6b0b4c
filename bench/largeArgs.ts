/**
 * A large task argument and a large result over TCP: a LocalCluster of 2
 * workers on TCP (inline executor); a `Float64Array` of `--mib` MiB is
 * submitted (`pure: false`) to a task returning its length, from `submit` to
 * holding the answer; then a result of the same size is fetched from a worker.
 * Each is timed `--runs` times after `--warmup` untimed runs; the medians are
 * printed, one JSON line each, after one for the configuration.
 *
 *   npm run bench:large-args [-- [--mib 200] [--runs 7] [--warmup 1]]
 *
 * The submit makes the client's copy of the argument (taken at the call) and
 * sends it to the scheduler, which passes it on to a worker; the fetch is one
 * hop. On a machine where fresh memory is dear (see `freshPageMicros`), each
 * copy of the array into new memory shows.
 */

import { Command } from "commander";
import { pino } from "pino";
import { nonNegativeInteger, positiveInteger } from "../src/bench/benchOptions.ts";
import { len, zeros } from "../src/bench/clusterTasks.ts";
import { freshPageMicros } from "../src/bench/memoryCost.ts";
import { median, round } from "../src/bench/stats.ts";
import { LocalCluster } from "../src/client/localCluster.ts";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../src/comm/comm.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { UsageError } from "../src/util/usageError.ts";
import { runScript } from "./benchCli.ts";

const TASKS = new URL("../src/bench/clusterTasks.ts", import.meta.url).href;

/** Options of a run. */
export interface LargeArgsOptions {
  readonly mib: number;
  readonly runs: number;
  readonly warmup: number;
}

/** Run the benchmark; calls `emit` with each JSON record. Throws if an answer is wrong. */
export async function benchLargeArgs(
  o: LargeArgsOptions,
  emit: (record: Record<string, unknown>) => void,
): Promise<void> {
  const n = (o.mib * 1024 * 1024) / 8;
  emit({
    bench: "large-args",
    workers: 2,
    executor: "inline",
    transport: "tcp",
    mib: o.mib,
    runs: o.runs,
    warmup: o.warmup,
    node: process.version,
    freshPageMicros: freshPageMicros(),
  });
  const cluster = await LocalCluster.start({
    workers: 2,
    threadsPerWorker: 1,
    executor: "inline",
    protocol: "tcp",
    taskModules: [TASKS],
    logger: pino({ level: process.env.WEFT_LOG_LEVEL ?? "warn" }, pino.destination(2)),
  });
  try {
    const client = await cluster.client();
    const arr = new Float64Array(n).fill(1);
    const submit: number[] = [];
    for (let r = 0; r < o.warmup + o.runs; r++) {
      const t0 = performance.now();
      const f = client.submitWith({ pure: false }, len, arr);
      const got = await f;
      const s = (performance.now() - t0) / 1000;
      f.release();
      if (got !== n) throw new Error(`wrong answer: ${got} elements, not ${n}`);
      if (r >= o.warmup) submit.push(s);
    }
    emit({
      what: "submit",
      seconds: round(median(submit), 3),
      runsSeconds: submit.map((x) => round(x, 3)),
    });
    const result = client.submitWith({ pure: false }, zeros, n);
    await result.exception();
    const fetch: number[] = [];
    for (let r = 0; r < o.warmup + o.runs; r++) {
      const t0 = performance.now();
      const got = await result.result();
      const s = (performance.now() - t0) / 1000;
      if (got.length !== n) throw new Error(`wrong answer: ${got.length} elements, not ${n}`);
      if (r >= o.warmup) fetch.push(s);
    }
    result.release();
    emit({
      what: "fetch",
      seconds: round(median(fetch), 3),
      runsSeconds: fetch.map((x) => round(x, 3)),
    });
  } finally {
    await cluster.close();
  }
}

/**
 * The largest `--mib`: the argument travels to the scheduler, and on to a worker, in
 * one message, of at most {@link DEFAULT_MAX_MESSAGE_BYTES} (4 GiB - 1) bytes.
 */
export const MAX_MIB = Math.floor(DEFAULT_MAX_MESSAGE_BYTES / (1024 * 1024));

/** `--mib`, `--runs` and `--warmup` as given to commander, checked. */
export function largeArgsOptions(opts: Readonly<Record<string, string>>): LargeArgsOptions {
  const mib = positiveInteger(opts.mib, "--mib");
  // 1e9 started the cluster, then failed making the array (an "Invalid typed array length").
  if (mib > MAX_MIB) {
    throw new UsageError(
      `--mib must be at most ${MAX_MIB} (the argument travels in one message of at most 4 GiB), got ${mib}`,
    );
  }
  return {
    mib,
    runs: positiveInteger(opts.runs, "--runs"),
    warmup: nonNegativeInteger(opts.warmup, "--warmup"),
  };
}

/** `npm run bench:large-args`; returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("bench:large-args")
    .description("A large task argument (submit) and a large result (fetch) over TCP")
    .option("--mib <n>", `size of the array in MiB (at most ${MAX_MIB})`, "200")
    .option("--runs <n>", "timed runs of each (the median is reported)", "7")
    .option("--warmup <n>", "untimed runs of each first", "1")
    .exitOverride();
  program.parse([...argv], { from: "user" });
  const opts = program.opts<Record<string, string>>();
  await benchLargeArgs(largeArgsOptions(opts), (record) =>
    process.stdout.write(`${JSON.stringify(record)}\n`),
  );
  return 0;
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  process.exitCode = await runScript("bench:large-args", main);
}
