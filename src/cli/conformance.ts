import { Command } from "commander";
import { runConformance } from "./conformanceRunner.ts";

// A closed stdout (`npm run conformance | head`) ends the run quietly, not with a stack trace.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code !== "EPIPE") throw err;
  process.exit(process.exitCode ?? 1);
});

const program = new Command()
  .name("conformance")
  .description(
    "Replay conformance vectors recorded from Dask's worker state machine and report every divergence",
  )
  .argument("<paths...>", "vector files (.json, .json.gz) or directories holding them")
  .option("-v, --verbose", "list every vector, not only failures")
  .addHelpText(
    "after",
    "\nA path that cannot be read, or a file named here that is not a vector, is reported as\nFAIL and the run goes on; files in a directory that are not vectors are ignored.\nExit codes: 0 every vector passed, 1 a vector failed (or there was none), 2 a path\ncould not be run (unreadable, or not a valid vector file).",
  )
  .action((paths: string[], opts: { verbose?: boolean }) => {
    process.exitCode = runConformance(paths, opts);
  });

program.parse();
