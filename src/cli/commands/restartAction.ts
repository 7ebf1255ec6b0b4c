/**
 * What `weft restart` does once its command line is parsed: restart.ts, its definition,
 * imports this module only then, so that `weft restart --help` loads none of it.
 */

import type { Client } from "../../client/client.ts";
import { RestartTimeoutError } from "../../client/errors.ts";
import { warnBareMilliseconds } from "./bareMilliseconds.ts";
import type { ConnectCliOptions } from "./connectOptions.ts";
import { type CliContext, EXIT } from "./context.ts";
import { INTERRUPTED, unlessInterrupted } from "./interruptedRequest.ts";
import { leadingScheduler, schedulerChoiceProblem } from "./schedulerChoice.ts";
import { timeoutMs } from "./serveUntil.ts";
import { withClient } from "./withClient.ts";
import { selectorsProblem, withSchemes } from "./workerSelectors.ts";

/** Options of `weft restart`. */
export interface RestartCliOptions extends ConnectCliOptions {
  readonly timeout?: string;
  readonly wait?: boolean;
}

/**
 * The timeout in the CLI's words: the error's own message advises the API's
 * options (timeoutMs, waitForWorkers), which weft restart takes as --timeout
 * and --no-wait.
 */
function restartTimeoutMessage(err: RestartTimeoutError): string {
  const { wanted, running, timeoutMs, nannies } = err;
  let message =
    `waited ${timeoutMs} ms for ${wanted} worker(s) to come back after the restart, but only ` +
    `${running} did (the restart itself is done): give a longer --timeout to wait longer, or --no-wait not to wait`;
  if (nannies < wanted) {
    message +=
      `; ${wanted - nannies} of them had no nanny, so they were closed rather than restarted: ` +
      "unless something starts them again (weft worker --nanny does), they never come back";
  }
  return message;
}

/** `weft restart [ADDRESS] [WORKER...]`: `args`, the address first unless `--scheduler-file`. */
export async function runRestart(
  args: readonly string[],
  opts: RestartCliOptions,
  ctx: CliContext,
): Promise<void> {
  const scheduler = leadingScheduler(args, opts.schedulerFile);
  const workers = scheduler.others;
  let timeout: number;
  try {
    const unnamed = schedulerChoiceProblem(scheduler.given, opts.schedulerFile);
    if (unnamed !== null) throw new Error(unnamed);
    timeout = timeoutMs("--timeout", opts.timeout ?? "30000");
    warnBareMilliseconds(ctx.stderr, "restart", [["--timeout", opts.timeout]]);
    const badSelector = selectorsProblem(workers);
    if (badSelector !== null) throw new Error(badSelector);
  } catch (err) {
    ctx.stderr.write(`weft restart: ${(err as Error).message}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  const wait = opts.wait !== false;
  await withClient("restart", scheduler, opts, ctx, async (client) => {
    // Ctrl-C (or SIGTERM) says what it left behind: see interruptedRequest.ts.
    const outcome = await unlessInterrupted("restart", ctx, RESTART_WORDS, (asking) =>
      restart(client, workers, timeout, wait, asking),
    );
    if (outcome === INTERRUPTED) return;
    if (outcome.kind === "workers") {
      const { restarted, failed } = outcome;
      for (const w of restarted) ctx.stdout.write(`restarted ${w}\n`);
      for (const f of failed) ctx.stdout.write(`not restarted ${f.worker}: ${f.reason}\n`);
      if (failed.length > 0) ctx.exitCode = EXIT.differences;
      return;
    }
    if (outcome.kind === "timeout") {
      ctx.stderr.write(`weft restart: ${restartTimeoutMessage(outcome.error)}\n`);
      ctx.exitCode = EXIT.differences;
      return;
    }
    if (!wait) {
      ctx.stdout.write("restarted; the workers are starting again\n");
      return;
    }
    const n = (await client.workers()).length;
    ctx.stdout.write(`restarted; ${n} worker${n === 1 ? "" : "s"} running\n`);
  });
}

/** What a Ctrl-C says. */
const RESTART_WORDS = {
  request: "the restart",
  beforeAsked: "nothing was restarted",
  afterAsked: "the scheduler goes on with it, and the workers may still be coming back",
};

/** How a restart ended, short of an error other than its timeout. */
type RestartOutcome =
  | { readonly kind: "cluster" }
  | { readonly kind: "timeout"; readonly error: RestartTimeoutError }
  | {
      readonly kind: "workers";
      readonly restarted: readonly string[];
      readonly failed: readonly { worker: string; reason: string }[];
    };

/**
 * Restart the cluster, or the `workers` named; `asking()` is called as the
 * request leaves (before it, only the names were looked up).
 */
async function restart(
  client: Client,
  workers: readonly string[],
  timeout: number,
  wait: boolean,
  asking: () => void,
): Promise<RestartOutcome> {
  try {
    if (workers.length > 0) {
      const named = await withSchemes(client, workers);
      asking();
      const { restarted, failed } = await client.restartWorkers(named, {
        timeoutMs: timeout,
        waitForWorkers: wait,
      });
      return { kind: "workers", restarted, failed };
    }
    asking();
    await client.restart({ timeoutMs: timeout, waitForWorkers: wait });
    return { kind: "cluster" };
  } catch (err) {
    if (!(err instanceof RestartTimeoutError)) throw err;
    return { kind: "timeout", error: err };
  }
}
