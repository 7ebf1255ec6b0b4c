import { Command } from "commander";
import { runConformance } from "./conformanceRunner.ts";

const program = new Command()
  .name("conformance")
  .description(
    "Replay conformance vectors recorded from Dask's worker state machine and report every divergence",
  )
  .argument("<paths...>", "vector files (.json, .json.gz) or directories holding them")
  .option("-v, --verbose", "list every vector, not only failures")
  .action((paths: string[], opts: { verbose?: boolean }) => {
    process.exitCode = runConformance(paths, opts);
  });

program.parse();
