/**
 * `weft profile <scheduler>`: CPU profiles of the workers' threads for a few
 * seconds, written as one `.cpuprofile` (Chrome DevTools, VS Code, speedscope
 * open it), and the functions where the time went, printed.
 */

import { Command } from "commander";
import { addConnectOptions, addSchedulerArgument } from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";
import type { ProfileCliOptions } from "./profileAction.ts";
import { WORKER_SELECTOR } from "./workerSelectors.ts";

/** `weft profile`: see docs/client.md. */
export function profileCommand(ctx: CliContext): Command {
  return addConnectOptions(addSchedulerArgument(new Command("profile")))
    .description(commandDescription("profile"))
    .option("--seconds <s>", "how long to profile", "10")
    .option("-o, --output <file>", "where to write the merged profile", "profile.cpuprofile")
    .option(
      "--worker <worker>",
      `only this worker: ${WORKER_SELECTOR}; repeatable`,
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--interval-us <us>", "microseconds between samples (100 to 1,000,000)", "1000")
    .option("--top <n>", "how many functions to list (0 to 50)", "20")
    .option("--with-scheduler", "profile the scheduler's thread too (listed as worker scheduler)")
    .option("--json", "print the summary (threads, top functions) as JSON")
    .addHelpText(
      "after",
      "\nEach worker's main thread (its event loop, and the tasks of the inline executor)\n" +
        "and its pool threads are sampled by V8's profiler; workers sharing a process\n" +
        "share its main thread, listed once. The file holds one profile: under its root,\n" +
        "a node per thread, the threads one after the other in time, so that the times\n" +
        "add up. Code already running when a thread's profile starts may be sampled as\n" +
        "(program) until it returns. Ctrl-C (SIGINT) or SIGTERM ends the profile early:\n" +
        "the time so far is written, and the workers stop profiling. Exit code: 0; 1 if a\n" +
        "--worker matches no connected worker (those that do are profiled), a worker could\n" +
        "not be profiled or the scheduler was lost; 2 for bad\n" +
        "usage (an -o that cannot be written among it) or a scheduler that cannot be reached;\n" +
        "130 (143) ended early by SIGINT (SIGTERM).",
    )
    .action(async (address: string | undefined, opts: ProfileCliOptions) => {
      await (await import("./profileAction.ts")).runProfile(address, opts, ctx);
    });
}
