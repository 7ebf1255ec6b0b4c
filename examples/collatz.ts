/**
 * Tasks that submit tasks, and coordinate: the number below N with the
 * longest Collatz sequence, on an embedded local cluster. One task is
 * submitted; it splits its range in two tasks it submits itself
 * (`workerClient`), and so on down to ranges of N/32 numbers, at least 1,000
 * (see `collatzTasks.ts`). Each leaf records its best in a variable of the
 * cluster, under a lock. The answer is checked against a direct loop, and the
 * task stream says where the tasks ran.
 *
 *   npx tsx examples/collatz.ts            # N = 300,000, 2 workers × 2 threads
 *   npx tsx examples/collatz.ts 1000000
 *   npx tsx examples/collatz.ts --help
 *
 * The workers run their tasks inline, which starts at once. On the thread
 * pool (`executor: "threads"`) the search takes about as long once the pool
 * threads have started (a second or so each from the sources: they import the
 * task modules, and the client once a task asks for one): a waiting (seceded)
 * task lends its thread to the next task.
 *
 * Exits 0 when the answer is right, 1 with a message otherwise (or for a failure),
 * 2 for a usage error.
 */

import type { Client } from "../src/client/client.ts";
import { LocalCluster, type LocalClusterOptions } from "../src/client/localCluster.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { type Best, bestIn, search } from "./collatzTasks.ts";
import { type ExampleOutput, intArg, intRange, runExample } from "./exampleCli.ts";

/** The task module every worker loads. */
export const COLLATZ_TASKS = new URL("./collatzTasks.ts", import.meta.url).href;

/** What a search found, and how. */
export interface CollatzReport {
  /** What the root task returned. */
  readonly best: Best;
  /** What the leaves left in the variable `collatz.best`. */
  readonly recorded: Best;
  /** Task runs by worker, from the task stream. */
  readonly runsByWorker: Readonly<Record<string, number>>;
}

/** Search `1..n-1` on `client`'s cluster, with leaves of `leaf` numbers. */
export async function runCollatz(client: Client, n: number, leaf: number): Promise<CollatzReport> {
  const since = Date.now() / 1000;
  const best = await client.submitWith({ pure: false }, search, 1, n, leaf);
  const recorded = await client.variable<Best>("collatz.best").get();
  const runsByWorker: Record<string, number> = {};
  for (const run of await client.getTaskStream({ since })) {
    runsByWorker[run.worker] = (runsByWorker[run.worker] ?? 0) + 1;
  }
  return { best, recorded, runsByWorker };
}

/** What `npx tsx examples/collatz.ts --help` prints. */
export const COLLATZ_USAGE = `usage: npx tsx examples/collatz.ts [N]

The number below N with the longest Collatz sequence, on an embedded local cluster
(2 workers × 2 threads): one task splits its range into tasks it submits itself, down
to ranges of N/32 numbers (at least 1,000); the leaves record their best in a variable
under a lock. The answer is checked against a direct loop.

  N  an integer from 2 to 300,000,000 (default 300000): beyond, a sequence can
     pass 2**53, where numbers are no longer exact

Exits 0 when the answer is right, 1 otherwise, 2 for a usage error.`;

/**
 * The largest N: every number below it has a sequence that stays below 2**53, so
 * the double arithmetic of `collatzSteps` is exact (319,804,831 is the first whose
 * sequence passes it).
 */
export const MAX_N = 300_000_000;

/** Run the example: print the answer and where the tasks ran; 0 if right, 1 otherwise, 2 for an N it cannot search. */
export async function main(
  n = 300_000,
  options: LocalClusterOptions = {},
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  if (!Number.isSafeInteger(n) || n < 2 || n > MAX_N) {
    out.write(`collatz: N must be ${intRange(2, MAX_N)}, got ${n}\n`);
    return 2;
  }
  const leaf = Math.max(1_000, Math.ceil(n / 32));
  const cluster = await LocalCluster.start({
    workers: 2,
    threadsPerWorker: 2,
    executor: "inline",
    taskModules: [COLLATZ_TASKS],
    ...options,
  });
  try {
    const client = await cluster.client();
    const started = performance.now();
    const { best, recorded, runsByWorker } = await runCollatz(client, n, leaf);
    const ms = Math.round(performance.now() - started);
    out.write(`below ${n.toLocaleString("en")}: ${best.n} takes ${best.steps} steps to reach 1\n`);
    for (const [worker, runs] of Object.entries(runsByWorker).sort()) {
      out.write(`  ${worker}: ${runs} tasks\n`);
    }
    const direct = bestIn(1, n);
    const right = best.n === direct.n && recorded.n === direct.n;
    out.write(
      `${right ? "checked against a direct loop: equal" : `WRONG: a direct loop finds ${direct.n} (${direct.steps} steps), the variable holds ${recorded.n}`} (${ms} ms)\n`,
    );
    return right ? 0 : 1;
  } finally {
    await cluster.close();
  }
}

/** `npx tsx examples/collatz.ts ARGS…`: returns the exit code. */
export function cli(argv: readonly string[], out: ExampleOutput = process): Promise<number> {
  return runExample(
    "collatz",
    COLLATZ_USAGE,
    argv,
    1,
    ([n]) => main(n === undefined ? undefined : intArg("N", n, 2, MAX_N)),
    out,
  );
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  process.exitCode = await cli(process.argv.slice(2));
}
