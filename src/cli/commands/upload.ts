/**
 * `weft upload <scheduler> <file...>`: send files to every worker of a
 * running cluster (Dask's `Client.upload_file`), which saves them and imports
 * the task modules among them; workers that join later get them too. The
 * workers must have been started with `--allow-uploads`.
 */

import { Command } from "commander";
import { addConnectOptions } from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";
import { SCHEDULER_ARGUMENT } from "./schedulerChoice.ts";
import type { UploadCliOptions } from "./uploadAction.ts";

/** `weft upload`: see docs/client.md. */
export function uploadCommand(ctx: CliContext): Command {
  return addConnectOptions(new Command("upload"))
    .description(commandDescription("upload"))
    .argument("[scheduler]", SCHEDULER_ARGUMENT)
    .argument("[files...]", "the files, in order (what a module imports before the module)")
    .option("--no-load", "only save the files: import none of them")
    .addHelpText(
      "after",
      "\nThe workers must run with --allow-uploads. Each keeps its uploads side by side in a\n" +
        "directory of its own: an uploaded module imports another by a relative path, and\n" +
        "packages by name as from the worker's working directory. Modules (.js, .mjs, .cjs,\n" +
        ".ts, .mts, .cts, .tsx) are imported once saved; other files are only saved. The\n" +
        "scheduler keeps the files: workers that join later, or that a restart starts, get them\n" +
        "as they register. The same file again changes nothing; another file under a name\n" +
        "uploaded already is refused. Prints `uploaded FILE to N workers` for each file.\n" +
        "Exit code: 0 once every file is uploaded; 1 if a worker could not save or import\n" +
        "one (the files after it are not sent); 2 for bad usage, a file that cannot be\n" +
        "uploaded, or a scheduler that cannot be reached.",
    )
    .action(async (address: string | undefined, files: string[], opts: UploadCliOptions) => {
      await (await import("./uploadAction.ts")).runUpload(
        address === undefined ? files : [address, ...files],
        opts,
        ctx,
      );
    });
}
