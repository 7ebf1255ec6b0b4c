/**
 * `npm start`: a word count on an embedded local cluster of 2 workers × 1 thread.
 *
 * The graph: generate C chunks of text, count the words of each (map), split
 * each chunk's counts into P partitions by the hash of the word and pick each
 * piece (shuffle: the pieces of a partition come from both workers), merge
 * each partition (reduce), then summarise. The answer (top words, total) is
 * checked against a direct count in this process.
 *
 *   npm start                       # 32 chunks × 40,000 words, 16 partitions
 *   WORDCOUNT_CHUNKS=64 npm start   # also WORDCOUNT_WORDS, WORDCOUNT_PARTITIONS, WORDCOUNT_EXECUTOR
 *   npm start -- --help
 *
 * Exits 0 when the answer is right, 1 with a message otherwise (or for a failure), 2
 * for a usage error (an argument, or a WORDCOUNT_* variable it cannot use).
 */

import { setImmediate as turn } from "node:timers/promises";
import type { Client } from "../src/client/client.ts";
import { LocalCluster, type LocalClusterOptions } from "../src/client/localCluster.ts";
import { watchProgress } from "../src/client/progress.ts";
import { parseDecimal } from "../src/util/decimal.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { reportError, runExample, UsageError } from "./exampleCli.ts";
import { count, merge, pick, split, summary, text } from "./wordcountTasks.ts";
import {
  countWords,
  generateText,
  mergeCounts,
  splitCounts,
  summarize,
  type WordcountSummary,
} from "./wordcountText.ts";

/** The task module every worker loads. */
export const WORDCOUNT_TASKS = new URL("./wordcountTasks.ts", import.meta.url).href;

/** The size of the job. */
export interface WordcountSize {
  /** Chunks of text (map tasks). */
  readonly chunks: number;
  /** Words per chunk. */
  readonly words: number;
  /** Partitions of the shuffle (reduce tasks). */
  readonly partitions: number;
  /** Top words to report. */
  readonly top: number;
  /** Seed of the generated text. */
  readonly seed: number;
}

/** The default job of `npm start`. */
export const DEFAULT_SIZE: WordcountSize = {
  chunks: 32,
  words: 40_000,
  partitions: 16,
  top: 10,
  seed: 7,
};

/** The most words a chunk: its text is one string, which V8 caps at 2^29 characters. */
export const MAX_WORDS = 10_000_000;
/** The most tasks the job's graph may have: it is built whole, in this process, before it runs. */
export const MAX_TASKS = 1_000_000;

/** How many tasks {@link wordcountGraph} makes for `size`. */
export function wordcountTasks(size: Pick<WordcountSize, "chunks" | "partitions">): number {
  const { chunks, partitions } = size;
  return 3 * chunks + chunks * partitions + partitions + 1;
}

/** The word-count graph and the key of its answer. */
export function wordcountGraph(size: WordcountSize): {
  graph: Record<string, unknown[]>;
  answer: string;
} {
  const { chunks, words, partitions, top, seed } = size;
  const graph: Record<string, unknown[]> = {};
  for (let i = 0; i < chunks; i++) {
    graph[`wc-text-${i}`] = [text, seed, i, words];
    graph[`wc-count-${i}`] = [count, `wc-text-${i}`];
    graph[`wc-split-${i}`] = [split, `wc-count-${i}`, partitions];
    for (let j = 0; j < partitions; j++) graph[`wc-part-${i}-${j}`] = [pick, `wc-split-${i}`, j];
  }
  const merged: string[] = [];
  for (let j = 0; j < partitions; j++) {
    const pieces = Array.from({ length: chunks }, (_, i) => `wc-part-${i}-${j}`);
    graph[`wc-merge-${j}`] = [merge, pieces];
    merged.push(`wc-merge-${j}`);
  }
  graph["wc-summary"] = [summary, merged, top];
  return { graph, answer: "wc-summary" };
}

/**
 * The same answer, computed directly in this process: a chunk at a time, the
 * event loop turning between chunks, as the embedded cluster is still up (a
 * scheduler whose loop is blocked for seconds warns about it).
 */
export async function directWordcount(size: WordcountSize): Promise<WordcountSummary> {
  const parts = Array.from({ length: size.partitions }, () => [] as Map<string, number>[]);
  for (let i = 0; i < size.chunks; i++) {
    await turn();
    const pieces = splitCounts(countWords(generateText(size.seed, i, size.words)), size.partitions);
    for (let j = 0; j < size.partitions; j++) parts[j].push(pieces[j]);
  }
  return summarize(
    parts.map((p) => mergeCounts(p)),
    size.top,
  );
}

/** What a run found. */
export interface WordcountReport {
  readonly answer: WordcountSummary;
  readonly expected: WordcountSummary;
  /** Why the answer is wrong, or null. */
  readonly mismatch: string | null;
  /** Tasks done, each counted once however often it was computed (a worker lost). */
  readonly tasks: number;
  /** Keys fetched by one worker from another. */
  readonly transfers: number;
  readonly seconds: number;
}

function mismatch(got: WordcountSummary, want: WordcountSummary): string | null {
  if (got.total !== want.total) return `total ${got.total}, expected ${want.total}`;
  if (got.distinct !== want.distinct)
    return `${got.distinct} distinct words, expected ${want.distinct}`;
  for (let i = 0; i < want.top.length; i++) {
    const [w, n] = want.top[i];
    const g = got.top[i];
    if (g === undefined || g[0] !== w || g[1] !== n) {
      return `top word ${i + 1} is ${JSON.stringify(g)}, expected ${JSON.stringify([w, n])}`;
    }
  }
  return null;
}

/** Where a run writes. */
export interface WordcountOutput {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream & { readonly isTTY?: boolean };
}

/** Compute the word count of `size` with `client`, showing progress on `out.stderr`. */
export async function runWordcount(
  client: Client,
  size: WordcountSize,
  out: WordcountOutput,
): Promise<WordcountReport> {
  const { graph, answer: answerKey } = wordcountGraph(size);
  const tasks = Object.keys(graph).length;
  const before = await client.counters();
  const progress = await watchProgress(client, tasks, { stream: out.stderr, label: "word count" });
  const t0 = performance.now();
  let answer: WordcountSummary;
  try {
    const result = await client.get(graph, { keys: [answerKey] });
    answer = result[answerKey] as WordcountSummary;
  } finally {
    await progress.stop();
  }
  const seconds = (performance.now() - t0) / 1000;
  const after = await client.counters();
  const expected = await directWordcount(size);
  return {
    answer,
    expected,
    mismatch: mismatch(answer, expected),
    tasks: after.tasksDone - before.tasksDone,
    transfers: after.keysTransferred - before.keysTransferred,
    seconds,
  };
}

const fmt = (n: number): string => n.toLocaleString("en-US");

/** The report as the example prints it. */
export function formatReport(r: WordcountReport, size: WordcountSize, cluster: string): string {
  const lines = [
    `weft word count: ${fmt(size.chunks)} chunks × ${fmt(size.words)} words, ${size.partitions} partitions, on ${cluster}`,
    "",
    "top words:",
  ];
  const width = Math.max(...r.answer.top.map(([w]) => w.length), 4);
  r.answer.top.forEach(([w, n], i) => {
    lines.push(`  ${String(i + 1).padStart(2)}. ${w.padEnd(width)} ${fmt(n).padStart(10)}`);
  });
  lines.push(
    "",
    `total: ${fmt(r.answer.total)} words, ${fmt(r.answer.distinct)} distinct` +
      (r.mismatch === null ? " (checked against a direct count: equal)" : ""),
    `summary: ${fmt(r.tasks)} tasks, ${fmt(r.transfers)} transfers between workers, ${r.seconds.toFixed(2)} s`,
  );
  return `${lines.join("\n")}\n`;
}

/** What `npm start -- --help` prints. */
export const WORDCOUNT_USAGE = `usage: npm start  (or: npx tsx examples/wordcount.ts)

A word count on an embedded local cluster of 2 workers × 1 thread: generated text
counted by chunk (map), split by the hash of the word (shuffle) and merged (reduce);
the answer is checked against a direct count. It takes no arguments; the environment
sizes the job:

  WORDCOUNT_CHUNKS      chunks of text, an integer ≥ 1 (default ${DEFAULT_SIZE.chunks})
  WORDCOUNT_WORDS       words a chunk, an integer from 1 to ${fmt(MAX_WORDS)} (default ${fmt(DEFAULT_SIZE.words)})
  WORDCOUNT_PARTITIONS  partitions of the shuffle, an integer ≥ 1 (default ${DEFAULT_SIZE.partitions})
  WORDCOUNT_EXECUTOR    threads (default) or inline

The graph has 3 × chunks + chunks × partitions + partitions + 1 tasks, at most
${fmt(MAX_TASKS)}.

Exits 0 when the answer is right, 1 otherwise, 2 for a usage error.`;

function envInt(name: string, dflt: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = process.env[name];
  if (v === undefined || v === "") return dflt;
  const n = parseDecimal(v);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${name} must be a positive integer, got ${JSON.stringify(v)}`);
  if (n > max) throw new UsageError(`${name} must be at most ${fmt(max)}, got ${v}`);
  return n;
}

/** The job's size from the WORDCOUNT_* variables, refused in one line when it cannot run. */
function envSize(): WordcountSize {
  const size: WordcountSize = {
    ...DEFAULT_SIZE,
    chunks: envInt("WORDCOUNT_CHUNKS", DEFAULT_SIZE.chunks, MAX_TASKS),
    words: envInt("WORDCOUNT_WORDS", DEFAULT_SIZE.words, MAX_WORDS),
    partitions: envInt("WORDCOUNT_PARTITIONS", DEFAULT_SIZE.partitions, MAX_TASKS),
  };
  const tasks = wordcountTasks(size);
  if (tasks > MAX_TASKS) {
    throw new UsageError(
      `WORDCOUNT_CHUNKS × WORDCOUNT_PARTITIONS is too large: ${fmt(size.chunks)} chunks and ${fmt(size.partitions)} partitions make ${fmt(tasks)} tasks, more than the ${fmt(MAX_TASKS)} this example runs`,
    );
  }
  return size;
}

function envExecutor(): NonNullable<LocalClusterOptions["executor"]> {
  const v = process.env.WORDCOUNT_EXECUTOR;
  if (v === undefined || v === "") return "threads";
  if (v !== "threads" && v !== "inline") {
    throw new UsageError(`WORDCOUNT_EXECUTOR must be threads or inline, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** `npm start`: returns the exit code (2 for a WORDCOUNT_* variable it cannot use). */
export async function main(out: WordcountOutput = process): Promise<number> {
  let cluster: LocalCluster | null = null;
  try {
    const size = envSize();
    const executor = envExecutor();
    cluster = await LocalCluster.start({
      workers: 2,
      threadsPerWorker: 1,
      executor,
      taskModules: [WORDCOUNT_TASKS],
    });
    const client = await cluster.client();
    const report = await runWordcount(client, size, out);
    out.stdout.write(
      formatReport(report, size, `a LocalCluster of 2 workers × 1 thread (${executor})`),
    );
    if (report.mismatch !== null) {
      out.stderr.write(`wordcount: wrong answer: ${report.mismatch}\n`);
      return 1;
    }
    return 0;
  } catch (err) {
    return reportError("wordcount", err, out);
  } finally {
    await cluster?.close();
  }
}

/** `npm start -- ARGS…` (it takes none but `--help`): returns the exit code. */
export function cli(argv: readonly string[], out: WordcountOutput = process): Promise<number> {
  return runExample("wordcount", WORDCOUNT_USAGE, argv, 0, () => main(out), out);
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  const code = await cli(process.argv.slice(2));
  process.exitCode = code;
  // Should anything keep the event loop alive, do not hang.
  setTimeout(() => process.exit(code), 2_000).unref();
}
