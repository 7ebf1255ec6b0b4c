/**
 * What `weft retire` does once its command line is parsed: retire.ts, its definition,
 * imports this module only then, so that `weft retire --help` loads none of it.
 */

import type { ConnectCliOptions } from "./connectOptions.ts";
import { type CliContext, EXIT } from "./context.ts";
import { INTERRUPTED, unlessInterrupted } from "./interruptedRequest.ts";
import { leadingScheduler, schedulerChoiceProblem } from "./schedulerChoice.ts";
import { positiveInt } from "./serveUntil.ts";
import { withClient } from "./withClient.ts";
import { selectorsProblem, withSchemes } from "./workerSelectors.ts";

/** Options of `weft retire`. */
export interface RetireCliOptions extends ConnectCliOptions {
  readonly n?: string;
  readonly idle?: boolean;
  readonly json?: boolean;
}

/** What a Ctrl-C says. */
const RETIRE_WORDS = {
  request: "the retirement",
  beforeAsked: "nothing was retired",
  afterAsked:
    "the scheduler goes on with it (the workers' results move to the others, then each closes)",
};

/** `weft retire [ADDRESS] [WORKER...]`: `args`, the address first unless `--scheduler-file`. */
export async function runRetire(
  args: readonly string[],
  opts: RetireCliOptions,
  ctx: CliContext,
): Promise<void> {
  const scheduler = leadingScheduler(args, opts.schedulerFile);
  const workers = scheduler.others;
  let which: readonly string[] | { n: number } | undefined;
  try {
    const unnamed = schedulerChoiceProblem(scheduler.given, opts.schedulerFile);
    if (unnamed !== null) throw new Error(unnamed);
    const given =
      (workers.length > 0 ? 1 : 0) + (opts.n !== undefined ? 1 : 0) + (opts.idle ? 1 : 0);
    if (given > 1) throw new Error("give workers, --n or --idle, only one of them");
    const badSelector = selectorsProblem(workers);
    if (badSelector !== null) throw new Error(badSelector);
    if (given === 0) {
      throw new Error(
        "name the workers to retire (addresses, hosts or names), or give --n or --idle",
      );
    }
    which =
      opts.n !== undefined ? { n: positiveInt("--n", opts.n) } : opts.idle ? undefined : workers;
  } catch (err) {
    ctx.stderr.write(`weft retire: ${(err as Error).message}\n`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  await withClient("retire", scheduler, opts, ctx, async (client) => {
    // Ctrl-C (or SIGTERM) says what it left behind: see interruptedRequest.ts.
    const outcome = await unlessInterrupted("retire", ctx, RETIRE_WORDS, async (asking) => {
      const named = Array.isArray(which) ? await withSchemes(client, which) : which;
      asking();
      return client.retireWorkers(named);
    });
    if (outcome === INTERRUPTED) return;
    const { retired, failed } = outcome;
    if (opts.json === true) {
      ctx.stdout.write(`${JSON.stringify({ retired, failed }, null, 2)}\n`);
    } else {
      for (const w of retired) ctx.stdout.write(`retired ${w}\n`);
      for (const f of failed) ctx.stdout.write(`not retired ${f.worker}: ${f.reason}\n`);
      // --n or --idle on a cluster that can spare none: said, rather than nothing printed.
      if (retired.length === 0 && failed.length === 0) {
        ctx.stdout.write("no worker retired: the scheduler found none it could spare\n");
      }
    }
    if (failed.length > 0) ctx.exitCode = EXIT.differences;
  });
}
