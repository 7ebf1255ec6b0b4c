import { ReplayInputError } from "../../replay/errors.ts";
import { type CliContext, EXIT } from "./context.ts";

/**
 * Runs a command body; a ReplayInputError (unreadable, truncated, corrupt or unknown
 * file) becomes one line on stderr, `weft <command>: <file>: <reason>`, and exit code 2.
 * Other errors are bugs: they propagate.
 */
export async function withInputErrors(
  ctx: CliContext,
  command: string,
  body: () => Promise<void>,
): Promise<void> {
  try {
    await body();
  } catch (err) {
    if (!(err instanceof ReplayInputError)) throw err;
    ctx.stderr.write(`weft ${command}: ${err.message}\n`);
    ctx.exitCode = EXIT.usage;
  }
}
