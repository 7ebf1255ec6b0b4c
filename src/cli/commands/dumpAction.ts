/**
 * What `weft dump` does once its command line is parsed: dump.ts, its definition,
 * imports this module only then, so that `weft dump --help` loads none of it.
 */

import type { ClusterDumpFormat } from "../../client/clusterDump.ts";
import { dumpEncodingOf } from "../../protocol/clusterDump/encoding.ts";
import { dumpFileName } from "../../protocol/clusterDump/write.ts";
import { dumpNameProblem } from "../../util/outputFile.ts";
import type { ConnectCliOptions } from "./connectOptions.ts";
import { type CliContext, EXIT } from "./context.ts";
import { sayingItWaits } from "./waitNotice.ts";
import { withClient } from "./withClient.ts";

/** Options of `weft dump`. */
export interface DumpCliOptions extends ConnectCliOptions {
  readonly output?: string;
  readonly format?: string;
}

/**
 * The format of the dump: --format, else the one `-o`'s extension names (as
 * `weft sim --dump` reads it: `-o x.yaml` writing msgpack to x.yaml.msgpack.gz
 * surprised), else msgpack; a problem when --format and the extension disagree.
 */
function dumpFormat(opts: DumpCliOptions): { format: ClusterDumpFormat } | { problem: string } {
  const encoding = opts.output === undefined ? null : dumpEncodingOf(opts.output);
  const implied: ClusterDumpFormat | null =
    encoding === null ? null : encoding.startsWith("yaml") ? "yaml" : "msgpack";
  if (opts.format === undefined) return { format: implied ?? "msgpack" };
  if (opts.format !== "msgpack" && opts.format !== "yaml") {
    return { problem: `--format must be msgpack or yaml, got ${JSON.stringify(opts.format)}` };
  }
  if (implied !== null && implied !== opts.format) {
    return {
      problem: `--format ${opts.format} but -o ${opts.output} names a ${implied} file (msgpack is written to .msgpack.gz or .msgpack, yaml to .yaml, .yml, .yaml.gz or .yml.gz): drop --format, or change the extension`,
    };
  }
  return { format: opts.format };
}

/** `weft dump [ADDRESS]` (the address, or `--scheduler-file`). */
export async function runDump(
  address: string | undefined,
  opts: DumpCliOptions,
  ctx: CliContext,
): Promise<void> {
  const format = dumpFormat(opts);
  if ("problem" in format) {
    ctx.stderr.write(`weft dump: ${format.problem}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  // The dump can take a while to gather: a file it cannot write (a directory, a directory
  // it cannot be written in) is said before.
  const output = opts.output ?? "weft-cluster-dump";
  const path = dumpFileName(output, format.format);
  const unwritable = await dumpNameProblem(output, path);
  if (unwritable !== null) {
    ctx.stderr.write(`weft dump: -o ${output}: ${unwritable}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  await withClient("dump", { given: address }, opts, ctx, async (client) => {
    const written = await sayingItWaits(ctx, "dump", "workers' states", () =>
      client.dumpClusterState(output, { format: format.format }),
    );
    ctx.stdout.write(
      `${written}\nreplay its workers: weft replay ${written}\na task's story:     weft story KEY ${written}\n`,
    );
  });
}
