/**
 * What `weft replay` does once its command line is parsed: replay.ts, its definition,
 * imports this module only then, so that `weft replay --help` loads none of it.
 */

import { formatReport } from "../../replay/formatReport.ts";
import { refuseDumpOnlyOptions, replayFile } from "../../replay/replayFile.ts";
import { type CliContext, EXIT } from "./context.ts";
import { checkInputExists, withInputErrors } from "./inputErrors.ts";
import { progressBar } from "./progress.ts";

/** Options of `weft replay`. */
export interface ReplayOptions {
  readonly followLog?: boolean;
  readonly json?: boolean;
  readonly worker?: string[];
}

/** `weft replay FILE`: replay it, print the report, exit 1 if it differs. */
export async function runReplay(file: string, opts: ReplayOptions, ctx: CliContext): Promise<void> {
  await withInputErrors(ctx, "replay", async () => {
    checkInputExists(file);
    // Said with the flags' names: replayFile would name its options.
    refuseDumpOnlyOptions(file, [
      opts.followLog === true && "--follow-log",
      opts.worker !== undefined && "--worker",
    ]);
    const progress = progressBar(ctx, "replay");
    let result: Awaited<ReturnType<typeof replayFile>>;
    try {
      result = await replayFile(file, {
        followLog: opts.followLog,
        workers: opts.worker,
        onProgress: progress.update,
      });
    } finally {
      progress.stop();
    }
    const { report } = result;
    ctx.stdout.write(
      opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`,
    );
    ctx.exitCode = report.ok ? EXIT.ok : EXIT.differences;
  });
}
