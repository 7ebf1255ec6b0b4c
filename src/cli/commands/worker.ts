import { Command, Option } from "commander";
import { CHILD_STOP_GRACE_MS } from "./childStop.ts";
import type { CliContext } from "./context.ts";
import { commandDescription } from "./index.ts";
import { MILLISECONDS_FORMS } from "./millisecondsOption.ts";
import { joinRepeatedList } from "./repeatedList.ts";
import { schedulerFilePath } from "./schedulerFilePath.ts";
import {
  addFrameLimitOptions,
  addHttpOptions,
  addPreloadOption,
  addTlsOptions,
  LOG_LEVELS,
} from "./serverOptions.ts";
import type { WorkerCliOptions } from "./workerAction.ts";

/** `weft worker`: see docs/client.md. */
export function workerCommand(ctx: CliContext): Command {
  const cmd = new Command("worker")
    .description(commandDescription("worker"))
    .argument(
      "[scheduler]",
      "the scheduler's address, e.g. tcp://10.0.0.1:8786 (or give --scheduler-file)",
    )
    .option(
      "--scheduler-file <path>",
      "read the scheduler's address from this file (weft scheduler --scheduler-file), waiting for it to appear, and reading it again while the address there cannot be reached (a scheduler gone, until one started again writes its own)",
      schedulerFilePath,
    )
    .option(
      "--nthreads <n>",
      "tasks computed at once (default: the CPU count, as a Worker's); at most 1024 threads",
    )
    .option(
      "--name <name>",
      "a name of its own, unique in the cluster: workers= restrictions, weft retire and clients may give it in place of its address",
    )
    .option(
      "--tasks <module>",
      "a task module (defineTask) every thread loads; repeat for more",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      "--listen <address>",
      "where peers and clients reach this worker (default: tcp://0.0.0.0:0, or tls://0.0.0.0:0 for a tls:// scheduler)",
    )
    .option("--contact-address <address>", "the address to advertise, if not the listening one")
    .addOption(
      new Option("--executor <kind>", "run tasks on a thread pool or the main thread")
        .choices(["threads", "inline"])
        .default("threads"),
    )
    .option(
      "--resources <list>",
      'abstract resources this worker has, e.g. GPU=1,MEM=8e9 (or apart by spaces, as Dask writes them: "GPU=1 MEM=8e9"); repeat for more',
      joinRepeatedList,
    )
    .option(
      "--memory-limit <size>",
      "the worker's memory budget, e.g. 4GiB, auto (the machine's memory times the worker's share of the CPUs, as Dask's default) or, as Dask's, 0.5 (half the machine's memory; 0: none): it spills, pauses and closes at shares of it (default: none)",
    )
    .option(
      "--memory-target <fraction>",
      "the share of --memory-limit kept in memory (default: 0.6)",
    )
    .option(
      "--spill-directory <dir>",
      "where spilled values go (default: the system's temporary directory)",
    )
    .addOption(
      new Option(
        "--memory-measure <what>",
        "what is held against --memory-limit: the process's resident memory, or the task values held",
      )
        .choices(["process", "managed"])
        .default("process"),
    )
    .option(
      "--memory-spill <fraction>",
      "beyond this share of --memory-limit, spill values until back at --memory-target (default: 0.7; off: never); measuring the task values held, those whose writes failed (a full disk) alone",
    )
    .option(
      "--memory-pause <fraction>",
      "beyond this share of --memory-limit, start no task and fetch no input until back within it (default: 0.8; off: never)",
    )
    .option(
      "--memory-terminate <fraction>",
      "beyond this share of --memory-limit, close (exit 1), losing the results held (default: 0.95; off: never)",
    )
    .option("--validate", "check the state machine after every stimulus (slow)")
    .option(
      "--nanny",
      "run the worker in a child process, started again when it stops on a fault, is killed or SIGTERMed by another, or the scheduler restarts it (as Dask's nanny)",
    )
    .option(
      "--allow-uploads",
      "save and import the files clients upload (client.uploadFile, weft upload): any client that reaches the scheduler then runs code of its choosing here",
    )
    .option(
      "--max-restarts <n>",
      "with --nanny: restarts in a row (a minute of running resets the count) before giving up",
      "5",
    )
    .option(
      "--lifetime <duration>",
      "retire after this long (e.g. 1h, 30m; a bare number is seconds, as in Dask): the results only this worker holds are copied to others, then it closes (default, and inf: never)",
    )
    .option(
      "--lifetime-stagger <duration>",
      "with --lifetime: off by up to this much either way, at random, so that workers started together leave apart (default: 0)",
    )
    .option(
      "--lifetime-restart",
      "with --lifetime and --nanny: the nanny starts a new worker once the lifetime is over",
    )
    .option(
      "--connect-timeout <ms|duration>",
      `how long each try to connect to the scheduler (and to peers) may take, and how long a --name another worker holds is asked for again before giving up, exit 2 (${MILLISECONDS_FORMS})`,
      "30000",
    )
    .option(
      "--death-timeout <ms|duration>",
      `how long the worker's start may take (${MILLISECONDS_FORMS}; Dask reads a bare 60 as seconds), the wait for a scheduler that refuses connections or cannot be reached yet included, then give up, exit 2, saying what it was doing; with --scheduler-file, the wait for the file has a bound of its own as long, before the start's (default, and inf: no bound, until stopped, as Dask's)`,
    );
  return addHttpOptions(addTlsOptions(addFrameLimitOptions(addPreloadOption(cmd, "worker"))))
    .addOption(
      new Option("--log-level <level>", "log level (JSON lines on stderr)")
        .choices(LOG_LEVELS)
        .default("info"),
    )
    .addHelpText(
      "after",
      "\nRuns until SIGINT or SIGTERM (exit 0), until it is retired, its --lifetime is over or the\n" +
        "cluster restarts (exit 0; under --nanny a restart, or --lifetime-restart, starts a new\n" +
        "worker), or until it loses the scheduler, its state machine fails or its memory passes\n" +
        "--memory-terminate (exit 1, saying why; a SIGINT or SIGTERM that comes while it closes\n" +
        "so is still a stop: exit 0, saying both). Under --nanny, SIGINT or SIGTERM is passed on\n" +
        `to the worker process as a SIGTERM, and one that has not exited ${CHILD_STOP_GRACE_MS / 1000} s later (its event\n` +
        "loop blocked, its close stuck) is SIGKILLed, saying so; the nanny exits 0. Exit 2:\n" +
        "it cannot start (a bad option, a task module that does not load, a scheduler that\n" +
        "refuses it or is not reached within --death-timeout, a start that does not end within\n" +
        "--death-timeout (a preload's weftSetup, a plugin's setup), a --memory-limit the process\n" +
        "is beyond already).\n" +
        "A scheduler not started yet is waited for (each try within --connect-timeout) until\n" +
        "--death-timeout, if given, else until SIGINT or SIGTERM (exit 0), logging every 10 s.\n" +
        "Listening on 0.0.0.0, it advertises the address of the interface that reaches the scheduler.\n" +
        "With --http-address it prints `http at http://<host>:<port>` (GET /health, /metrics,\n" +
        "/json/identity.json, /status in a browser).",
    )
    .action(async (given: string | undefined, opts: WorkerCliOptions) => {
      await (await import("./workerAction.ts")).runWorkerCommand(given, opts, cmd, ctx);
    });
}
