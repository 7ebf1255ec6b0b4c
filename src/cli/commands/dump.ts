/**
 * `weft dump <scheduler>`: write the cluster's state to a file (Dask's
 * `dump_cluster_state`), in the layout of Dask's cluster dumps, for `weft
 * replay` and `weft story` to read.
 */

import { Command } from "commander";
import { addConnectOptions, addSchedulerArgument } from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import type { DumpCliOptions } from "./dumpAction.ts";
import { commandDescription } from "./index.ts";

/** `weft dump`: see docs/replay.md. */
export function dumpCommand(ctx: CliContext): Command {
  return addConnectOptions(addSchedulerArgument(new Command("dump")))
    .description(commandDescription("dump"))
    .option(
      "-o, --output <file>",
      "the file (default: weft-cluster-dump); .msgpack.gz or .yaml is added unless it ends in one of the format's (.msgpack[.gz], .yaml[.gz], .yml[.gz]): then written so, gzipped or not",
    )
    .option(
      "--format <format>",
      "msgpack (gzipped, Dask's default) or yaml (default: as -o's extension says, else msgpack)",
    )
    .addHelpText(
      "after",
      "\nThe dump holds the scheduler's transition log, tasks and workers, and each worker's\n" +
        "state machine with its transition log (the last 100,000 records) and stimulus log\n" +
        "(the last 10,000 stimuli): `weft replay FILE` replays each worker from it and checks\n" +
        "the replay against the logs; `weft story KEY... FILE` merges what the scheduler and\n" +
        "the workers recorded of a task. A worker that cannot be reached is written with the\n" +
        "error in its place. Prints the path written. Exit code: 0; 1 if the dump failed;\n" +
        "2 for bad usage or a scheduler that cannot be reached.",
    )
    .action(async (address: string | undefined, opts: DumpCliOptions) => {
      await (await import("./dumpAction.ts")).runDump(address, opts, ctx);
    });
}
