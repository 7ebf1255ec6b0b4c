/**
 * How the commands that look at or operate a running cluster connect to it: as
 * a client, to the scheduler their command line names, saying why they cannot.
 */

import { Client } from "../../client/client.ts";
import { warnBareMilliseconds } from "./bareMilliseconds.ts";
import { sayingItWaitsForAnswer } from "./connectNotice.ts";
import type { ConnectCliOptions } from "./connectOptions.ts";
import { type CliContext, EXIT } from "./context.ts";
import { connectThroughSchedulerFile } from "./liveSchedulerFile.ts";
import {
  checkNotGivenTwice,
  type SchedulerArgument,
  schedulerAddress,
  waitingForFileLine,
  waitingForSchedulerLine,
} from "./schedulerChoice.ts";
import {
  frameLimitsFrom,
  requireTlsScheme,
  stderrLogger,
  timeoutMs,
  tlsFrom,
} from "./serveUntil.ts";

/**
 * Connect as a client for the command `name` to the scheduler the command line
 * names (`scheduler`, or `--scheduler-file`) and run `body` with it, then close
 * it. Neither or both of them, a scheduler file that is missing or wrong, a
 * scheduler that cannot be reached, or a bad `--connect-timeout`, is said on
 * stderr with exit 2; an error of `body` with exit 1. A wait for the file, or
 * for a scheduler not reached yet, is said on stderr when it starts.
 */
export async function withClient(
  name: string,
  scheduler: SchedulerArgument,
  opts: ConnectCliOptions,
  ctx: CliContext,
  body: (client: Client) => Promise<void>,
): Promise<void> {
  let client: Client;
  try {
    const connectMs = timeoutMs("--connect-timeout", opts.connectTimeout ?? "10000");
    warnBareMilliseconds(ctx.stderr, name, [["--connect-timeout", opts.connectTimeout]]);
    const limits = frameLimitsFrom(opts);
    // Waits are said at once on stderr (stdout stays clean for --json): they may last --connect-timeout.
    const secure = tlsFrom(opts);
    const address = await schedulerAddress(scheduler, opts.schedulerFile, connectMs, (path) =>
      ctx.stderr.write(waitingForFileLine(name, path, connectMs)),
    );
    requireTlsScheme(address, secure);
    let dialled = address;
    client = await sayingItWaitsForAnswer(
      (line) => ctx.stderr.write(line),
      name,
      () => dialled,
      connectMs,
      (said) => {
        const connect = (where: string | (() => Promise<string>)): Promise<Client> =>
          Client.connect(where, {
            name,
            timeoutMs: connectMs,
            ...limits,
            ...secure,
            // A command's output is its own: the client says nothing but that it waits.
            logger: stderrLogger(`weft.${name}`, "silent"),
            onWaiting: ({ address: at, reason }) => {
              said();
              ctx.stderr.write(waitingForSchedulerLine(name, at, reason, connectMs));
            },
            // A command that looks at the cluster does not print what its tasks print.
            printTaskOutput: false,
          });
        // A file naming a scheduler gone is read again until one accepts, as a worker does.
        return connectThroughSchedulerFile(
          opts.schedulerFile,
          address,
          connectMs,
          (next) => {
            requireTlsScheme(next, secure);
            checkNotGivenTwice(scheduler, opts.schedulerFile, next);
            dialled = next;
          },
          connect,
        );
      },
    );
  } catch (err) {
    ctx.stderr.write(`weft ${name}: ${(err as Error).message}
`);
    ctx.exitCode = EXIT.usage;
    return;
  }
  try {
    await body(client);
  } catch (err) {
    ctx.stderr.write(`weft ${name}: ${(err as Error).message}
`);
    // The client's TypeError is its refusal of what it was given: bad usage, as the
    // commands' help says, not a cluster that could not do it.
    ctx.exitCode = err instanceof TypeError ? EXIT.usage : EXIT.differences;
  } finally {
    await client.close();
  }
}
