import { Command } from "commander";
import { addConnectOptions } from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";
import type { StoryOptions } from "./storyAction.ts";

/** `weft story KEY... FILE|SCHEDULER`: see docs/replay.md. */
export function storyCommand(ctx: CliContext): Command {
  return addConnectOptions(
    new Command("story")
      .description(commandDescription("story"))
      .usage("[options] <key...> <file|scheduler>")
      // Commander takes a variadic argument only last, so KEY... FILE is one argument,
      // split (and checked) in the action; it is named for what the user types first.
      .argument(
        "[key...]",
        "task keys (as Python's str() writes them) or stimulus ids; the last argument is the cluster dump file (.msgpack.gz, .yaml, …) or a running cluster's scheduler (tcp://host:port, tls://host:port, or host:port when no file has that name), unless --scheduler-file names the scheduler: then every argument is a key",
      )
      .option(
        "--replay",
        "workers' records from a replay of each worker instead of the dumped logs",
      )
      .option("--follow-log", "with --replay (implied): replay following the dumped log's choices")
      .option("--json", "print the records as JSON")
      .addHelpText(
        "after",
        "\nEach line: time (UTC), where it happened (scheduler or worker address), the record.\nReplayed records are marked with *. Of a running cluster, the records its scheduler and\nworkers keep now (client.story); --replay and --follow-log are for dumps (--connect-timeout,\n--tls-* and the frame limits for a running cluster). With --scheduler-file FILE every argument is a key,\nasked of the scheduler FILE names.\nExit codes: 0 found, 1 no record mentions them (or a worker's could not be read), 2 unreadable\ninput or a scheduler that cannot be reached.",
      )
      .action(async (args: string[], opts: StoryOptions, cmd: Command) => {
        await (await import("./storyAction.ts")).runStory(args, opts, cmd, ctx);
      }),
  );
}
