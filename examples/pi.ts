/**
 * An actor: π by throwing darts, on an embedded local cluster. The client
 * makes one `PiTally` object, which stays on the worker that made it; then
 * submits a task per chunk of darts, each given the tally's handle. A task
 * counts its chunk's hits and reports them to the tally (one call to that
 * worker); meanwhile the client reads the tally's counts to show progress.
 * The estimate is checked against the same darts counted by a direct loop.
 *
 *   npx tsx examples/pi.ts              # 64 chunks of 250,000 darts
 *   npx tsx examples/pi.ts 256 1000000
 *   npx tsx examples/pi.ts --help
 *
 * Exits 0 when the tally matches the direct count, 1 otherwise (or for a failure),
 * 2 for a usage error.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { LocalCluster, type LocalClusterOptions } from "../src/client/localCluster.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { type ExampleOutput, intArg, intRange, runExample } from "./exampleCli.ts";
import { hitsOfChunk, piChunk, piTally } from "./piTasks.ts";

/** The task module every worker loads. */
export const PI_TASKS = new URL("./piTasks.ts", import.meta.url).href;

/** What `npx tsx examples/pi.ts --help` prints. */
export const PI_USAGE = `usage: npx tsx examples/pi.ts [CHUNKS [SAMPLES]]

π by throwing darts on an embedded local cluster (2 workers × 2 threads): a task per
chunk of SAMPLES darts reports its hits to one actor, whose counts show the progress;
the estimate is checked against a direct count.

  CHUNKS   tasks, an integer from 1 to 1,000,000 (default 64)
  SAMPLES  darts a task, an integer ≥ 1 (default 250000)

Exits 0 when the tally matches the direct count, 1 otherwise, 2 for a usage error.`;

/** The most tasks: each is a future the client holds, submitted at once. */
export const MAX_CHUNKS = 1_000_000;

/** Run the example: print progress, the estimate and the check; 0 if right, 1 otherwise, 2 for counts it cannot use. */
export async function main(
  chunks = 64,
  samples = 250_000,
  options: LocalClusterOptions = {},
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  for (const [name, v, max] of [
    ["CHUNKS", chunks, MAX_CHUNKS],
    ["SAMPLES", samples, Number.MAX_SAFE_INTEGER],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 1 || v > max) {
      out.write(`pi: ${name} must be ${intRange(1, max)}, got ${v}\n`);
      return 2;
    }
  }
  const cluster = await LocalCluster.start({
    workers: 2,
    threadsPerWorker: 2,
    taskModules: [PI_TASKS],
    ...options,
  });
  try {
    const client = await cluster.client();
    const started = performance.now();
    const tally = await client.submitWith({ actor: true }, piTally).result();
    out.write(`the tally lives on ${tally.address}\n`);
    const tasks = Array.from({ length: chunks }, (_, i) =>
      client.submit(piChunk, tally, i, samples),
    );
    const total = chunks * samples;
    let done = false;
    const all = client.gather(tasks).finally(() => {
      done = true;
    });
    // The tasks report as they finish: the tally's count is the progress.
    while (!done) {
      await Promise.race([all.catch(() => {}), sleep(250)]);
      const seen = await tally.get("samples");
      out.write(`  ${seen.toLocaleString("en")} of ${total.toLocaleString("en")} darts\n`);
    }
    const hits = (await all).reduce((a, b) => a + b, 0);
    const estimate = await tally.call("estimate");
    const ms = Math.round(performance.now() - started);
    out.write(`π ≈ ${estimate.toFixed(6)} from ${total.toLocaleString("en")} darts (${ms} ms)\n`);
    let direct = 0;
    for (let i = 0; i < chunks; i++) direct += hitsOfChunk(i, samples);
    const right = (await tally.get("hits")) === direct && hits === direct;
    out.write(
      right
        ? "checked against a direct loop: equal\n"
        : `WRONG: a direct loop counts ${direct} hits, the tally ${await tally.get("hits")}\n`,
    );
    return right ? 0 : 1;
  } finally {
    await cluster.close();
  }
}

/** `npx tsx examples/pi.ts ARGS…`: returns the exit code. */
export function cli(argv: readonly string[], out: ExampleOutput = process): Promise<number> {
  return runExample(
    "pi",
    PI_USAGE,
    argv,
    2,
    ([chunks, samples]) =>
      main(
        chunks === undefined ? undefined : intArg("CHUNKS", chunks, 1, MAX_CHUNKS),
        samples === undefined ? undefined : intArg("SAMPLES", samples, 1),
      ),
    out,
  );
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  process.exitCode = await cli(process.argv.slice(2));
}
