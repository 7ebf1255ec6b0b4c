import { Command } from "commander";
import { INPUT_EXTENSIONS } from "../../replay/inputKind.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";
import type { ReplayOptions } from "./replayAction.ts";

/** `weft replay FILE`: see docs/replay.md. */
export function replayCommand(ctx: CliContext): Command {
  return new Command("replay")
    .description(commandDescription("replay"))
    .argument("<file>", INPUT_EXTENSIONS)
    .option(
      "--follow-log",
      "dumps: make the choices that depended on Python's set order (gather peers and keys, which ready task runs first) as the dumped log shows them",
    )
    .option(
      "--worker <address>",
      "dumps: replay only this worker, by its address in the dump (repeat for more)",
      (address: string, previous: string[] | undefined) => [...(previous ?? []), address],
    )
    .option("--json", "print the report as JSON")
    .addHelpText(
      "after",
      "\nExit codes: 0 replayed as recorded, 1 differences found, 2 unreadable or unknown input.\nSee docs/replay.md.",
    )
    .action(async (file: string, opts: ReplayOptions) => {
      await (await import("./replayAction.ts")).runReplay(file, opts, ctx);
    });
}
