/**
 * `weft upload <scheduler> <file...>`: send files to every worker of a
 * running cluster (Dask's `Client.upload_file`), which saves them and imports
 * the task modules among them; workers that join later get them too. The
 * workers must have been started with `--allow-uploads`.
 */

import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { Command } from "commander";
import { UploadError } from "../../client/errors.ts";
import { addConnectOptions, type ConnectCliOptions } from "./connectOptions.ts";
import { type CliContext, EXIT } from "./context.ts";
import { leadingScheduler, SCHEDULER_ARGUMENT, schedulerChoiceProblem } from "./schedulerChoice.ts";
import { withClient } from "./withClient.ts";

/** Options of `weft upload`. */
export interface UploadCliOptions extends ConnectCliOptions {
  /** False with `--no-load`: save the files without importing them. */
  readonly load?: boolean;
}

/** Why `file` cannot be uploaded (missing, not a file, unreadable), or null. */
export async function uploadProblem(file: string): Promise<string | null> {
  try {
    if (!(await stat(file)).isFile()) return "not a file";
    await access(file, constants.R_OK);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? "no such file" : `cannot read it (${code ?? String(err)})`;
  }
}

/**
 * `weft upload [ADDRESS] FILE...` (`args`, the address first unless `--scheduler-file`):
 * the files in the order given, stopping at the first that fails.
 */
export async function runUpload(
  args: readonly string[],
  opts: UploadCliOptions,
  ctx: CliContext,
): Promise<void> {
  const scheduler = leadingScheduler(args, opts.schedulerFile);
  const files = scheduler.others;
  const unusable =
    schedulerChoiceProblem(scheduler.given, opts.schedulerFile) ??
    (files.length === 0 ? "name the files to upload" : null);
  if (unusable !== null) {
    ctx.stderr.write(`weft upload: ${unusable}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  // Every file checked before any is sent: a typo in the last must not leave the
  // cluster with the first ones only (an upload cannot be taken back).
  for (const file of files) {
    const problem = await uploadProblem(file);
    if (problem !== null) {
      ctx.stderr.write(`weft upload: ${file}: ${problem}; nothing uploaded\n`);
      ctx.exitCode = EXIT.usage;
      return;
    }
  }
  await withClient("upload", scheduler, opts, ctx, async (client) => {
    for (const file of files) {
      let answers: Record<string, readonly string[]>;
      try {
        answers = await client.uploadFile(file, opts.load === false ? { load: false } : {});
      } catch (err) {
        if (!(err instanceof UploadError || err instanceof TypeError)) throw err;
        ctx.stderr.write(`weft upload: ${err.message}\n`);
        ctx.exitCode = err instanceof TypeError ? EXIT.usage : EXIT.differences;
        return;
      }
      const n = Object.keys(answers).length;
      ctx.stdout.write(`uploaded ${file} to ${n} worker${n === 1 ? "" : "s"}\n`);
    }
  });
}

/** `weft upload`: see docs/client.md. */
export function uploadCommand(ctx: CliContext): Command {
  return addConnectOptions(new Command("upload"))
    .description(
      "Send files to every worker of a running cluster, which saves them and imports the task modules among them",
    )
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
      await runUpload(address === undefined ? files : [address, ...files], opts, ctx);
    });
}
