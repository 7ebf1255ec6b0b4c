import { Command, Option } from "commander";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";
import { MILLISECONDS_FORMS } from "./millisecondsOption.ts";
import { joinRepeatedList } from "./repeatedList.ts";
import type { RunOptions } from "./runAction.ts";
import { schedulerFilePath } from "./schedulerFilePath.ts";
import { addFrameLimitOptions, addTlsOptions, LOG_LEVELS } from "./serverOptions.ts";

/** `weft run`: see docs/client.md. */
export function runCommand(ctx: CliContext): Command {
  const cmd = new Command("run")
    .description(commandDescription("run"))
    .argument(
      "<file>",
      'a JSON graph ({"graph": {"x": ["inc", 1], "y": ["add", "x", 2]}, "tasks": ["./tasks.ts"]}, or just the graph with --tasks ./tasks.ts), a module exporting `graph`, or - for a JSON graph on stdin (its "tasks" relative to the working directory)',
    )
    .option("--scheduler <address>", "use this scheduler instead of an embedded cluster")
    .option(
      "--scheduler-file <path>",
      "use the scheduler whose address this file holds (weft scheduler --scheduler-file), waiting up to --connect-timeout for it, then reading it again while the scheduler it names refuses connections, up to --connect-timeout",
      schedulerFilePath,
    )
    .option(
      "--connect-timeout <ms|duration>",
      `with --scheduler: how long to wait for the scheduler (and workers, when fetching results) to accept a connection and, for the scheduler, to answer it (${MILLISECONDS_FORMS}; default: 30000)`,
    )
    .option("--workers <n>", "embedded cluster: workers (default: 2)")
    .option(
      "--nthreads <n>",
      "embedded cluster: threads per worker (default: 1); at most 1024 threads in all",
    )
    .addOption(
      new Option(
        "--executor <kind>",
        "embedded cluster: run tasks on thread pools or inline (default: threads)",
      ).choices(["threads", "inline"]),
    )
    .option(
      "--memory-limit <size>",
      "embedded cluster: each worker's memory budget, e.g. 2GiB, auto (its share of the machine's memory, by threads) or, as Dask's, 0.5 (half the machine's memory; 0: none): it spills values beyond 60% of it (default: never)",
    )
    .option(
      "--tasks <module>",
      "a task module to load (with --scheduler: into the running workers, and those joining later); repeat for more",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      "--upload <file>",
      "with --scheduler: send a file to the workers (run with --allow-uploads), which import it if it is a module, as weft upload does; repeat for more, what a module imports first",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      "--task-stream <file>",
      "write the task runs of the computation (key, worker, status, compute and transfer times; with --scheduler, other clients' too) to this file as JSON",
    )
    .option(
      "--profile <file>",
      "profile the workers' threads while the graph computes and write the profile (.cpuprofile: Chrome DevTools, VS Code, speedscope) to this file; at most an hour",
    )
    .option(
      "--keys <list>",
      "comma-separated keys to compute; repeat for more (default: the file's keys, else the graph's sinks)",
      joinRepeatedList,
    )
    .option(
      "--key <key>",
      "a key to compute, exactly as written (commas and spaces included, as in \"('x', 0)\"); repeat for more, with --keys too",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      "--http-address <address>",
      "embedded cluster: serve the scheduler's /status page, /metrics and /health over HTTP here ([host]:port, e.g. :8787)",
    )
    .option("--no-progress", "no progress on stderr")
    .option("--validate", "embedded cluster: check every state machine after every stimulus");
  return addTlsOptions(addFrameLimitOptions(cmd))
    .addOption(
      new Option("--log-level <level>", "log level (JSON lines on stderr)")
        .choices(LOG_LEVELS)
        .default("error"),
    )
    .addHelpText(
      "after",
      "\nPrints the values of the keys as a JSON object on stdout; what tasks write there\n" +
        "(console.log) goes to stderr, as progress does. An embedded cluster that\n" +
        "fails to start (a task module that does not load) is said in one line; --log-level\n" +
        "warn or more verbose adds its workers' records of it that arrive before weft run exits.\n" +
        "Exit codes: 0 computed, 1 a task failed (its error and remote stack on stderr) or the\n" +
        "cluster was lost, 2 unusable input (a bad graph, a task module that does not load, a\n" +
        "scheduler that cannot be reached), 130 (143) interrupted by SIGINT (SIGTERM): the cluster\n" +
        "is closed, or the scheduler told to release the graph.",
    )
    .action(async (file: string, opts: RunOptions) => {
      await (await import("./runAction.ts")).runGraph(file, opts, ctx);
    });
}
