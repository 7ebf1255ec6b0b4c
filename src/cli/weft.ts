/**
 * The `weft` command: `weft <subcommand> [options]`, one file per subcommand in
 * `src/cli/commands/` (listed in `commands/index.ts`). Run it with `npm run weft --`,
 * `npx tsx src/cli/weft.ts` or `bin/weft.js`.
 */
import { Command, CommanderError } from "commander";
import { weftVersion } from "../protocol/version.ts";
import { isEntryPoint } from "../util/entryPoint.ts";
import { type CliContext, EXIT, processContext } from "./commands/context.ts";
import { COMMANDS } from "./commands/index.ts";

/** Applies what every command shares: output through `ctx`, errors as exceptions. */
function configure(cmd: Command, ctx: CliContext): Command {
  return (
    cmd
      .configureOutput({
        writeOut: (s) => ctx.stdout.write(s),
        writeErr: (s) => ctx.stderr.write(s),
      })
      .exitOverride()
      .showHelpAfterError("(run with --help for usage)")
      // List subcommands with their own usage line (`story [options] <key...> <file>`).
      .configureHelp({ subcommandTerm: (sub) => `${sub.name()} ${sub.usage()}` })
  );
}

/** The `weft` program with every subcommand, writing through `ctx`. */
export function buildProgram(ctx: CliContext): Command {
  const program = configure(
    new Command("weft")
      .description(
        "weft: a distributed task-graph runtime built around a port of Dask's worker state machine",
      )
      .version(weftVersion(), "-V, --version", "print weft's version"),
    ctx,
  );
  for (const make of COMMANDS) program.addCommand(configure(make(ctx), ctx));
  return program;
}

/**
 * Runs `weft` with `argv` (as `process.argv`: node and script first) and returns the
 * exit code: the command's, 0 for `--help`, 2 for a usage error.
 */
export async function main(
  argv: readonly string[],
  ctx: CliContext = processContext(),
): Promise<number> {
  const program = buildProgram(ctx);
  try {
    await program.parseAsync([...argv]);
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // --help, `weft help [command]` and --version end with exit code 0; `weft` alone
    // shows the help too, as an error (commander's exit code 1 there): a usage error.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  return ctx.exitCode;
}

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv);
