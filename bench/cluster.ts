/**
 * `npm run bench:cluster`: whole local clusters on Dask's benchmark graphs (see
 * src/bench/clusterBench.ts, which `weft bench cluster` runs too). Here
 * `--protocol tls` takes the test credentials.
 *
 *   npm run bench:cluster [-- [--runs 7] [--graphs map,chain] [--executor threads]]
 */

import { benchCluster } from "../src/bench/clusterBench.ts";
import {
  type ClusterBenchCliOptions,
  clusterBenchCommand,
  clusterBenchOptions,
} from "../src/bench/clusterBenchCommand.ts";
import { testTls } from "../src/comm/testTls.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { runScript } from "./benchCli.ts";

/** `npm run bench:cluster` with `argv`; returns the exit code (throws for bad options). */
export async function main(argv: readonly string[]): Promise<number> {
  const program = clusterBenchCommand("bench:cluster", "the test credentials").exitOverride();
  program.parse([...argv], { from: "user" });
  const opts = program.opts<ClusterBenchCliOptions>();
  const options = clusterBenchOptions(opts, opts.protocol === "tls" ? testTls() : undefined);
  await benchCluster(
    options,
    (record) => process.stdout.write(`${JSON.stringify(record)}\n`),
    (line) => process.stderr.write(`${line}\n`),
  );
  return 0;
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  process.exitCode = await runScript("bench:cluster", main);
}
