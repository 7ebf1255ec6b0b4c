import { availableParallelism } from "node:os";
import { Command, Option } from "commander";
import { Worker } from "../../worker/worker.ts";
import { workerAddresses } from "./contactAddress.ts";
import { type CliContext, EXIT } from "./context.ts";
import {
  addFrameLimitOptions,
  byteSize,
  type FrameLimitCliOptions,
  frameLimitsFrom,
  LOG_LEVELS,
  parseResources,
  positiveInt,
  stderrLogger,
  timeoutMs,
  untilSignal,
} from "./serveUntil.ts";

/** Options of `weft worker`. */
interface WorkerCliOptions extends FrameLimitCliOptions {
  readonly nthreads?: string;
  readonly tasks: readonly string[];
  readonly listen: string;
  readonly contactAddress?: string;
  readonly executor: "threads" | "inline";
  readonly resources?: string;
  readonly memoryLimit?: string;
  readonly memoryTarget?: string;
  readonly spillDirectory?: string;
  readonly validate?: boolean;
  readonly logLevel: string;
  readonly connectTimeout: string;
}

/** A number in (0, 1] given as text; throws a clear error. */
function fractionOption(name: string, text: string): number {
  const n = Number(text);
  if (!(n > 0 && n <= 1)) throw new Error(`${name} must be a number in (0, 1], got ${text}`);
  return n;
}

/**
 * Run a worker for the scheduler at `scheduler` until `stop` resolves
 * (SIGINT/SIGTERM, or the worker closing, in production).
 */
export async function runWorker(
  scheduler: string,
  opts: WorkerCliOptions,
  ctx: CliContext,
  stop: (worker: Worker) => Promise<unknown>,
): Promise<void> {
  let worker: Worker;
  let nthreads: number;
  try {
    nthreads = positiveInt("--nthreads", opts.nthreads ?? String(availableParallelism()));
    const connectTimeoutMs = timeoutMs("--connect-timeout", opts.connectTimeout);
    const resources = opts.resources === undefined ? {} : parseResources(opts.resources);
    const { listen, contact } = await workerAddresses(opts.listen, scheduler);
    worker = await Worker.create({
      scheduler,
      listen,
      ...(opts.contactAddress !== undefined || contact !== null
        ? { contactAddress: opts.contactAddress ?? contact ?? undefined }
        : {}),
      nthreads,
      executor: opts.executor === "inline" ? "inline" : "piscina",
      taskModules: opts.tasks,
      resources,
      ...(opts.memoryLimit !== undefined
        ? { memoryLimit: byteSize("--memory-limit", opts.memoryLimit) }
        : {}),
      ...(opts.memoryTarget !== undefined
        ? { memoryTarget: fractionOption("--memory-target", opts.memoryTarget) }
        : {}),
      ...(opts.spillDirectory !== undefined ? { spillDirectory: opts.spillDirectory } : {}),
      ...frameLimitsFrom(opts),
      validate: opts.validate === true,
      connectTimeoutMs,
      logger: stderrLogger("weft.worker", opts.logLevel),
    });
  } catch (err) {
    ctx.stderr.write(`weft worker: cannot start: ${(err as Error).message}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  ctx.stdout.write(
    `worker at ${worker.address} (${nthreads} thread${nthreads === 1 ? "" : "s"}) for ${scheduler}\n`,
  );
  await stop(worker);
  await worker.close();
  if (worker.fault !== null) {
    ctx.stderr.write(`weft worker: stopped: ${worker.fault.split("\n")[0]}\n`);
    ctx.exitCode = EXIT.differences;
  }
}

/** `weft worker`: see docs/client.md. */
export function workerCommand(ctx: CliContext): Command {
  const cmd = new Command("worker")
    .description("Run a worker for a scheduler (TCP mode, many machines)")
    .argument("<scheduler>", "the scheduler's address, e.g. tcp://10.0.0.1:8786")
    .option("--nthreads <n>", "tasks computed at once (default: the CPU count, as a Worker's)")
    .option(
      "--tasks <module>",
      "a task module (defineTask) every thread loads; repeat for more",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option("--listen <address>", "where peers and clients reach this worker", "tcp://0.0.0.0:0")
    .option("--contact-address <address>", "the address to advertise, if not the listening one")
    .addOption(
      new Option("--executor <kind>", "run tasks on a thread pool or the main thread")
        .choices(["threads", "inline"])
        .default("threads"),
    )
    .option("--resources <list>", "abstract resources this worker has, e.g. GPU=1,MEM=8e9")
    .option(
      "--memory-limit <size>",
      "spill task values to disk beyond --memory-target of this size, e.g. 4GiB (default: never)",
    )
    .option(
      "--memory-target <fraction>",
      "the share of --memory-limit kept in memory (default: 0.6)",
    )
    .option(
      "--spill-directory <dir>",
      "where spilled values go (default: the system's temporary directory)",
    )
    .option("--validate", "check the state machine after every stimulus (slow)")
    .option(
      "--connect-timeout <ms>",
      "how long to wait for the scheduler (and peers) to accept a connection",
      "30000",
    );
  return addFrameLimitOptions(cmd)
    .addOption(
      new Option("--log-level <level>", "log level (JSON lines on stderr)")
        .choices(LOG_LEVELS)
        .default("info"),
    )
    .addHelpText(
      "after",
      "\nRuns until SIGINT or SIGTERM (exit 0), or until it loses the scheduler or its state\n" +
        "machine fails (exit 1, saying why). Exit 2: it cannot start (a bad option, a task\n" +
        "module that does not load, a scheduler that refuses it or is not reached within\n" +
        "--connect-timeout).\n" +
        "Listening on 0.0.0.0, it advertises the address of the interface that reaches the scheduler.",
    )
    .action(async (scheduler: string, opts: WorkerCliOptions) => {
      await runWorker(scheduler, opts, ctx, (w) => untilSignal(w.closed));
    });
}
