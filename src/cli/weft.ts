/**
 * The `weft` command: `weft <subcommand> [options]`, each subcommand's definition
 * (options, arguments, help) in `src/cli/commands/<name>.ts`, listed in
 * `commands/index.ts`, and what it does in `<name>Action.ts`, which the definition
 * imports only when the command runs: its help loads none of it. Run it with
 * `npm run weft --`, `npx tsx src/cli/weft.ts` or `bin/weft.js`.
 */
import { Command, CommanderError } from "commander";
import { weftVersion } from "../protocol/version.ts";
import { isEntryPoint } from "../util/entryPoint.ts";
import { removePartialFilesOnSignals } from "../util/partialFiles.ts";
import { exitCodeOf } from "../util/usageError.ts";
import { type CliContext, processContext } from "./commands/context.ts";
import { daskOptionHint } from "./commands/daskOptions.ts";
import { COMMANDS, type CommandEntry, type CommandFactory } from "./commands/index.ts";

/**
 * Applies what every command shares: output through `ctx`, errors as
 * exceptions; to its subcommands too (`weft amm start`).
 */
function configure(cmd: Command, ctx: CliContext): Command {
  for (const sub of cmd.commands) configure(sub, ctx);
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

/**
 * The factories of the subcommands `args` (`process.argv` after the script) need:
 * the one they name (`weft worker ...`, `weft help worker`) from its module, and the
 * others as `weft --help` lists them (name, usage, description), from `entries`
 * alone, so that a command loads none of the others' modules and the help that
 * lists them, or the error that suggests one, loads none at all; none for
 * `weft --version`.
 */
export async function commandsFor(
  args: readonly string[],
  entries: readonly CommandEntry[] = COMMANDS,
): Promise<CommandFactory[]> {
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) return [];
  // The program's own options take no value: its first operand is the command commander
  // runs (`weft -- worker` too), or shows the help of after `help`.
  const operands = args.filter((a) => !a.startsWith("-"));
  const name = operands[0] === "help" ? operands[1] : operands[0];
  return Promise.all(entries.map((c) => (c.name === name ? c.load() : listedOnly(c))));
}

/** A command as `weft --help` lists it, without its options, arguments or action. */
function listedOnly(entry: CommandEntry): CommandFactory {
  return () => new Command(entry.name).usage(entry.usage).description(entry.description);
}

/** The `weft` program with the subcommands `commands` makes, writing through `ctx`. */
export function buildProgram(ctx: CliContext, commands: readonly CommandFactory[]): Command {
  const program = configure(
    new Command("weft")
      .description(
        "weft: a distributed task-graph runtime built around a port of Dask's worker state machine",
      )
      .version(weftVersion(), "-V, --version", "print weft's version"),
    ctx,
  );
  for (const make of commands) program.addCommand(configure(make(ctx), ctx));
  return program;
}

/**
 * The unknown command `args` name (the first operand, or the one after
 * `help`), with the commands it is a subcommand of (`["amm", "bogus"]`), when
 * `program` or the command named has no such subcommand; null when each is
 * known, or none is named.
 */
function unknownCommandOf(program: Command, args: readonly string[]): string[] | null {
  const operands = args.filter((a) => !a.startsWith("-"));
  const at = operands[0] === "help" ? 1 : 0;
  const name = operands[at];
  if (name === undefined || name === "help") return null;
  const cmd = program.commands.find((c) => c.name() === name || c.aliases().includes(name));
  if (cmd === undefined) return [name];
  if (cmd.commands.length === 0) return null;
  const unknown = unknownCommandOf(cmd, operands.slice(at + 1));
  return unknown === null ? null : [name, ...unknown];
}

/**
 * `weft help help` (`weft amm help help`) as the arguments of the help it asks for: the
 * help command's own is the help of the command it belongs to, as `weft help` shows
 * (commander takes the second `help` for an unknown command); null for anything else.
 */
function helpOfHelp(program: Command, args: readonly string[]): string[] | null {
  const operands = args.filter((a) => !a.startsWith("-"));
  const path: string[] = [];
  let cmd = program;
  for (let i = 0; i < operands.length; i++) {
    if (operands[i] === "help") return operands[i + 1] === "help" ? [...path, "--help"] : null;
    const sub = cmd.commands.find((c) => c.name() === operands[i]);
    if (sub === undefined || sub.commands.length === 0) return null;
    cmd = sub;
    path.push(operands[i]);
  }
  return null;
}

/** After commander's "unknown option '--port'": what to type instead, if Dask's. */
function hintDaskOption(args: readonly string[], message: string, ctx: CliContext): void {
  const option = /unknown option '([^']+)'/.exec(message)?.[1];
  const command = args.find((a) => !a.startsWith("-"));
  if (option === undefined || command === undefined) return;
  const hint = daskOptionHint(command, option);
  if (hint !== null) ctx.stderr.write(`${hint}\n`);
}

/**
 * Runs `weft` with `argv` (as `process.argv`: node and script first) and returns the
 * exit code: the command's, 0 for `--help`, 2 for a usage error.
 */
export async function main(argv: readonly string[], given?: CliContext): Promise<number> {
  // This process's own command line (a test passes its context): a Ctrl-C while a file
  // is being written removes its partial file, which the signal's default action left.
  if (given === undefined) removePartialFilesOnSignals();
  const ctx = given ?? processContext();
  const program = buildProgram(ctx, await commandsFor(argv.slice(2)));
  // What to parse instead of the arguments given, if anything (help of help first).
  const instead = helpOfHelp(program, argv.slice(2)) ?? unknownCommandOf(program, argv.slice(2));
  try {
    // Commander answers `weft nanny --help` and `weft help nanny` (`weft amm nope --help`)
    // with the help of the command above, as if `nanny` were fine: parsed alone, the name
    // gets its usual error.
    await program.parseAsync(instead === null ? [...argv] : [...argv.slice(0, 2), ...instead]);
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.code === "commander.unknownOption") hintDaskOption(argv.slice(2), err.message, ctx);
    // --help, `weft help [command]` and --version end with exit code 0; `weft` alone
    // shows the help too, as an error (commander's exit code 1 there): a usage error.
    return exitCodeOf(err);
  }
  return ctx.exitCode;
}

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv);
