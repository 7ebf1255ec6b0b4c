/**
 * `weft logs <scheduler>`: the last records the scheduler and its workers
 * logged (Dask's `get_scheduler_logs` and `get_worker_logs`), merged by time:
 * what went wrong where, without a shell on each machine. JSON with `--json`.
 */

import { Command } from "commander";
import { addConnectOptions, addSchedulerArgument } from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";
import type { LogsCliOptions } from "./logsAction.ts";
import { WORKER_SELECTOR } from "./workerSelectors.ts";

/** `weft logs`: see docs/client.md. */
export function logsCommand(ctx: CliContext): Command {
  return addConnectOptions(addSchedulerArgument(new Command("logs")))
    .description(commandDescription("logs"))
    .option(
      "--n <n>",
      'the last n records of each process (of --level or more severe), or "all" it keeps',
      "100",
    )
    .option(
      "--worker <worker>",
      `only this worker's records: ${WORKER_SELECTOR}; repeatable`,
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--no-scheduler", "leave out the scheduler's records")
    .option("--no-workers", "leave out the workers' records")
    .option("--level <level>", "only records of this level or more severe (trace … fatal)")
    .option("--json", "print {scheduler: [records], workers: {address: [records]}} as JSON")
    .addHelpText(
      "after",
      "\nEach process keeps its last 10,000 records (the scheduler's and the worker's\n" +
        "logLength), at the levels its logger writes (for weft scheduler and weft worker,\n" +
        "their --log-level, info by default), whether its stderr goes to a terminal, a file\n" +
        "or nowhere. A line is `TIME LEVEL PROCESS LOGGER: MESSAGE KEY=VALUE... (ERROR)`, the\n" +
        "process `scheduler` or a worker's address, KEY=VALUE the context logged with it\n" +
        "(the task's key, the worker or peer, the reason). Exit code: 0; 1 if a worker's records could not\n" +
        "be read, or a --worker matches no connected worker (the others' records are\n" +
        "printed); 2 for bad usage or a scheduler that cannot be reached.",
    )
    .action(async (address: string | undefined, opts: LogsCliOptions) => {
      await (await import("./logsAction.ts")).runLogs(address, opts, ctx);
    });
}
