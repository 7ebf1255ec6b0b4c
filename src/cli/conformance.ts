/**
 * `npm run conformance -- PATH...`: replay conformance vectors (see
 * conformanceRunner.ts). Exit codes: 0 every vector passed, 1 a vector failed,
 * 2 a path could not be run or the command line is wrong.
 */
import { Command, CommanderError } from "commander";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../util/entryPoint.ts";
import { runConformance } from "./conformanceRunner.ts";

/** Where the runner writes: the process's streams, or buffers in tests. */
export interface ConformanceOutput {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/**
 * Runs the conformance command with `argv` (as `process.argv`: node and script
 * first) and returns its exit code.
 */
export function conformanceMain(
  argv: readonly string[],
  out: ConformanceOutput = {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
  },
): number {
  let code = 0;
  const program = new Command()
    .name("conformance")
    .description(
      "Replay conformance vectors recorded from Dask's worker state machine and report every divergence",
    )
    .argument("<paths...>", "vector files (.json, .json.gz) or directories holding them")
    .option("-v, --verbose", "list every vector, not only failures")
    .configureOutput({ writeOut: out.stdout, writeErr: out.stderr })
    // Commander exits 1 on a usage error, the code of a failed vector: a CI script
    // must tell a mistyped command line from a conformance regression.
    .exitOverride()
    .addHelpText(
      "after",
      "\nA path that cannot be read, or a file named here that is not a vector, is reported as\nFAIL and the run goes on; in a directory, files not named .json or .json.gz are\nignored (a broken one is FAIL).\nExit codes: 0 every vector passed, 1 a vector failed (or there was none), 2 a path\ncould not be run (unreadable, or not a valid vector file) or bad usage (a missing\npath, an unknown option).",
    )
    .action((paths: string[], opts: { verbose?: boolean }) => {
      code = runConformance(paths, {
        ...opts,
        log: (line) => out.stdout(`${line}\n`),
      });
    });
  try {
    program.parse([...argv]);
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // --help ends with 0; everything else commander throws is a usage error.
    return err.exitCode === 0 ? 0 : 2;
  }
  return code;
}

if (isEntryPoint(import.meta.url)) {
  // A closed stdout (`npm run conformance | head`) ends the run quietly, not with a stack trace.
  exitQuietlyWhenStdoutCloses(1);
  process.exitCode = conformanceMain(process.argv);
}
