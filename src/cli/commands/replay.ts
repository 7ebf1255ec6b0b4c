import { Command } from "commander";
import { formatReport } from "../../replay/formatReport.ts";
import { INPUT_EXTENSIONS } from "../../replay/inputKind.ts";
import { replayFile } from "../../replay/replayFile.ts";
import { type CliContext, EXIT } from "./context.ts";
import { checkInputExists, withInputErrors } from "./inputErrors.ts";
import { progressBar } from "./progress.ts";

/** Options of `weft replay`. */
interface ReplayOptions {
  readonly followLog?: boolean;
  readonly json?: boolean;
  readonly worker?: string[];
}

/** `weft replay FILE`: see docs/replay.md. */
export function replayCommand(ctx: CliContext): Command {
  return new Command("replay")
    .description(
      "Replay a Dask cluster dump, a conformance vector or a stimulus stream on the worker state machine and report where it differs",
    )
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
      await withInputErrors(ctx, "replay", async () => {
        checkInputExists(file);
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
    });
}
