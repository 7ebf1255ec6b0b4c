import { Command, Option } from "commander";
import { WORKER_CLOSE_MAX_MS } from "../../util/closeBudget.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";
import { MILLISECONDS_FORMS } from "./millisecondsOption.ts";
import { NO_TIMEOUT_HELP } from "./noTimeout.ts";
import type { SchedulerCliOptions } from "./schedulerAction.ts";
import { schedulerFilePath } from "./schedulerFilePath.ts";
import {
  addFrameLimitOptions,
  addHttpOptions,
  addPreloadOption,
  addTlsOptions,
  LOG_LEVELS,
} from "./serverOptions.ts";

/** `weft scheduler`: see docs/client.md. */
export function schedulerCommand(ctx: CliContext): Command {
  const cmd = new Command("scheduler")
    .description(commandDescription("scheduler"))
    .option(
      "--listen <address>",
      "where to listen (default: tcp://0.0.0.0:8786, or tls://0.0.0.0:8786 with the --tls-* files)",
    )
    .option(
      "--worker-ttl <ms|duration>",
      `remove a worker not heard from for this long (${MILLISECONDS_FORMS}); at least 2000 ms (workers heartbeat every second); ${NO_TIMEOUT_HELP}`,
      "30000",
    )
    .option(
      "--lease-timeout <ms|duration>",
      `release a lock, multi-lock or semaphore lease its client has not refreshed for this long (${MILLISECONDS_FORMS}; a client frozen: stopped, a VM paused); clients refresh every third of it, as Dask's lease-timeout; at least 1000 ms; ${NO_TIMEOUT_HELP}`,
      "30000",
    )
    .option("--validate", "check the state machine after every stimulus (slow)")
    .option(
      "--no-check-worker-address",
      "accept workers at addresses this scheduler cannot connect to (their peers may still)",
    )
    .option(
      "--no-work-stealing",
      "never move queued tasks from busy workers to idle ones (work stealing is on by default, as in Dask)",
    )
    .option(
      "--work-stealing-interval <ms|duration>",
      `how often a round of work stealing runs (${MILLISECONDS_FORMS})`,
      "100",
    )
    .option(
      "--no-active-memory-manager",
      "keep every replica of a result until it is released (the active memory manager, on by default as in Dask, drops the replicas workers fetched as inputs once no task needs them)",
    )
    .option(
      "--active-memory-manager-interval <ms|duration>",
      `how often a round of the active memory manager runs (${MILLISECONDS_FORMS})`,
      "2000",
    )
    .option(
      "--close-worker-grace <ms|duration>",
      `how long a worker told to close (retired, restarted, the cluster closing) may keep its connection open before the scheduler closes it (${MILLISECONDS_FORMS}; the default is what a worker's orderly close may take at most; inf: until the worker closes it)`,
      String(WORKER_CLOSE_MAX_MS),
    )
    .option(
      "--idle-timeout <duration>",
      "close the cluster (every worker, then the scheduler: exit 0) once it has been idle this long (e.g. 30m; a bare number is seconds, as in Dask): no task running, queued or waiting for a worker; clients do not count (default, and inf: never)",
    )
    .option(
      "--tasks <module>",
      "a task module (defineTask) whose functions clients may run on the scheduler (runOnScheduler) or make scheduler plugins with (registerSchedulerPlugin), imported when first needed; repeat for more",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      "--scheduler-file <path>",
      "write the scheduler's address (and identity, as JSON) to this file once listening, for weft worker --scheduler-file and clients (readSchedulerFile); removed when the scheduler closes (a symlink is followed: the file it names is written and removed, the link kept); a file naming an address where a weft scheduler still runs (asked its identity, within 2 s), or holding what is no scheduler file, is refused; one left by a scheduler gone is replaced, and so is one whose address something other than a weft scheduler accepts connections at (said on stderr)",
      schedulerFilePath,
    );
  return addHttpOptions(addTlsOptions(addFrameLimitOptions(addPreloadOption(cmd, "scheduler"))))
    .addOption(
      new Option("--log-level <level>", "log level (JSON lines on stderr)")
        .choices(LOG_LEVELS)
        .default("info"),
    )
    .addHelpText(
      "after",
      "\nPrints `scheduler at <address>` on stdout (listening on 0.0.0.0 or [::]: an address of\n" +
        "this machine's network interfaces, then `(listening on tcp://0.0.0.0:8786)`), and with\n" +
        "--http-address `http at http://<host>:<port>` (GET /status in a browser, /health, /metrics,\n" +
        "/json/identity.json, /json/counts.json); runs until SIGINT or SIGTERM (exit 0), or until its state machine\n" +
        "fails (exit 1, saying why).\n" +
        "Exit 2: it cannot start (a bad option, an address in use, a --scheduler-file that names a\n" +
        "scheduler still running).\n" +
        "With --scheduler-file FILE it writes its address to FILE (JSON) before printing it.\n" +
        "Then: weft worker <address> --tasks ./mytasks.ts  (on each machine; or --scheduler-file FILE)\n" +
        "      weft run graph.json --scheduler <address>",
    )
    .action(async (opts: SchedulerCliOptions) => {
      await (await import("./schedulerAction.ts")).runSchedulerCommand(opts, cmd, ctx);
    });
}
