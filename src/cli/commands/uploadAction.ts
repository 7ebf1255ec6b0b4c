/**
 * What `weft upload` does once its command line is parsed: upload.ts, its definition,
 * imports this module only then, so that `weft upload --help` loads none of it.
 */

import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { UploadError } from "../../client/errors.ts";
import type { ConnectCliOptions } from "./connectOptions.ts";
import { type CliContext, EXIT } from "./context.ts";
import { leadingScheduler, schedulerChoiceProblem } from "./schedulerChoice.ts";
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
