/**
 * `weft status <scheduler>`: what a running scheduler has, as a client sees it:
 * its workers (threads, status, tasks assigned, results held, and spilled to
 * disk when they have a memory limit), its counters and the datasets
 * published. A table, or JSON with `--json`.
 */

import { Command } from "commander";
import { Client } from "../../client/client.ts";
import type { SchedulerCounters, WorkerIdentity } from "../../protocol/messagesSession.ts";
import { formatBytes } from "../../util/parseBytes.ts";
import { type CliContext, EXIT } from "./context.ts";
import {
  SCHEDULER_ARGUMENT,
  SCHEDULER_FILE_OPTION,
  type SchedulerArgument,
  type SchedulerFileCliOptions,
  schedulerAddress,
  waitingForFileLine,
  waitingForSchedulerLine,
} from "./schedulerChoice.ts";
import {
  addTlsOptions,
  requireTlsScheme,
  stderrLogger,
  type TlsCliOptions,
  timeoutMs,
  tlsFrom,
} from "./serveUntil.ts";

/** Options of the commands that connect to a scheduler as a client. */
export interface ConnectCliOptions extends TlsCliOptions, SchedulerFileCliOptions {
  readonly connectTimeout?: string;
}

/**
 * Add the options of {@link ConnectCliOptions} (`--scheduler-file`,
 * `--connect-timeout`, TLS) to `cmd`.
 */
export function addConnectOptions(cmd: Command): Command {
  return addTlsOptions(
    cmd
      .option("--scheduler-file <path>", SCHEDULER_FILE_OPTION)
      .option(
        "--connect-timeout <ms>",
        "how long to wait for the scheduler to accept the connection (default: 10000)",
      ),
  );
}

/** The scheduler argument of a command that connects to a running scheduler. */
export function addSchedulerArgument(cmd: Command): Command {
  return cmd.argument("[scheduler]", SCHEDULER_ARGUMENT);
}

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
    // Waits are said at once on stderr (stdout stays clean for --json): they may last --connect-timeout.
    const address = await schedulerAddress(scheduler, opts.schedulerFile, connectMs, (path) =>
      ctx.stderr.write(waitingForFileLine(name, path, connectMs)),
    );
    const secure = tlsFrom(opts);
    requireTlsScheme(address, secure);
    client = await Client.connect(address, {
      name,
      timeoutMs: connectMs,
      ...secure,
      // A command's output is its own: the client says nothing but that it waits.
      logger: stderrLogger(`weft.${name}`, "silent"),
      onWaiting: ({ reason }) =>
        ctx.stderr.write(waitingForSchedulerLine(name, address, reason, connectMs)),
      // A command that looks at the cluster does not print what its tasks print.
      printTaskOutput: false,
    });
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

/** What `weft status` reports. */
export interface ClusterStatus {
  readonly scheduler: string;
  readonly workers: readonly WorkerIdentity[];
  readonly counters: SchedulerCounters;
  readonly datasets: readonly string[];
}

/** The status of the scheduler `client` is connected to. */
export async function clusterStatus(client: Client): Promise<ClusterStatus> {
  const [workers, counters, datasets] = await Promise.all([
    client.workers(),
    client.counters(),
    client.listDatasets(),
  ]);
  const sorted = [...workers].sort((a, b) => (a.address < b.address ? -1 : 1));
  return { scheduler: client.address, workers: sorted, counters, datasets };
}

/** `status` as the table `weft status` prints. */
export function formatStatus(status: ClusterStatus): string {
  const { workers, counters } = status;
  const threads = workers.reduce((n, w) => n + w.nthreads, 0);
  const lines = [
    `scheduler ${status.scheduler}: ${workers.length} worker${workers.length === 1 ? "" : "s"} (${threads} thread${threads === 1 ? "" : "s"}), ${counters.clients - 1} other client${counters.clients === 2 ? "" : "s"}`,
  ];
  if (workers.length > 0) {
    // The memory columns only when some worker has a memory limit (and so spills).
    const limited = workers.some((w) => w.memoryLimit !== null || w.spilled !== null);
    // Whether each worker has a nanny (restartable), only when some has one.
    const nannies = workers.some((w) => w.nanny === true);
    // The actors each holds, only when some worker has one.
    const actors = workers.some((w) => (w.actors ?? 0) > 0);
    // Names, only when some worker has one (weft worker --name).
    const names = workers.some((w) => typeof w.name === "string");
    const rows = [
      [
        "worker",
        ...(names ? ["name"] : []),
        "threads",
        "status",
        ...(nannies ? ["nanny"] : []),
        "processing",
        "keys",
        "bytes",
        ...(actors ? ["actors"] : []),
        ...(limited ? ["memory", "limit", "spilled"] : []),
      ],
      ...workers.map((w) => [
        w.address,
        ...(names ? [w.name ?? "-"] : []),
        String(w.nthreads),
        w.status,
        ...(nannies ? [w.nanny === true ? "yes" : "no"] : []),
        String(w.processing),
        String(w.keys),
        formatBytes(w.nbytes),
        ...(actors ? [String(w.actors ?? 0)] : []),
        ...(limited
          ? [
              w.memory === null ? "-" : formatBytes(w.memory),
              w.memoryLimit === null ? "-" : formatBytes(w.memoryLimit),
              w.spilled === null ? "-" : formatBytes(w.spilled.bytes),
            ]
          : []),
      ]),
    ];
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    for (const row of rows) {
      lines.push(
        row
          .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
          .join("  ")
          .trimEnd(),
      );
    }
  }
  lines.push(
    `tasks: ${counters.tasks} known, ${counters.tasksDone} done; reports: ${counters.tasksFinished} finished, ${counters.tasksErred} erred; ${counters.keysTransferred} keys transferred between workers; steals: ${counters.stealsRequested} requested, ${counters.stealsConfirmed} confirmed; ${counters.replicasDropped} replicas dropped by the active memory manager`,
  );
  lines.push(
    `datasets: ${status.datasets.length === 0 ? "none" : status.datasets.map((d) => JSON.stringify(d)).join(", ")}`,
  );
  return `${lines.join("\n")}\n`;
}

/** `weft status [ADDRESS]` (the address, or `--scheduler-file`). */
export async function runStatus(
  address: string | undefined,
  opts: ConnectCliOptions & { readonly json?: boolean },
  ctx: CliContext,
): Promise<void> {
  await withClient("status", { given: address }, opts, ctx, async (client) => {
    const status = await clusterStatus(client);
    ctx.stdout.write(
      opts.json === true ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status),
    );
  });
}

/** `weft status`: see docs/client.md. */
export function statusCommand(ctx: CliContext): Command {
  return addConnectOptions(
    addSchedulerArgument(
      new Command("status").description(
        "What a running scheduler has: its workers, counters and datasets",
      ),
    ),
  )
    .option("--json", "print JSON instead of a table")
    .action(async (address: string | undefined, opts: ConnectCliOptions & { json?: boolean }) => {
      await runStatus(address, opts, ctx);
    });
}
