import { existsSync, statSync } from "node:fs";
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

/** The extensions `weft dump` and `weft sim --dump` add to a name given without one. */
const DUMP_EXTENSIONS = [".msgpack.gz", ".yaml"] as const;

/**
 * Throws a {@link ReplayInputError} when `file` does not exist or is a directory,
 * before its kind is guessed from its name (`weft replay dump` was "unknown kind of
 * file" when `weft dump -o dump` had written dump.msgpack.gz, and so was `weft replay
 * ../shared/dumps`, the directory of the sample dumps), naming the dump meant if there
 * is one.
 */
export function checkInputExists(file: string): void {
  if (existsSync(file)) {
    if (statSync(file).isDirectory()) {
      throw new ReplayInputError(
        file,
        "cannot read the file: it is a directory (name one file in it)",
      );
    }
    return;
  }
  const meant = DUMP_EXTENSIONS.map((ext) => `${file}${ext}`).find((f) => existsSync(f));
  throw new ReplayInputError(
    file,
    `cannot read the file: it does not exist${meant === undefined ? "" : ` (${meant} does)`}`,
  );
}
