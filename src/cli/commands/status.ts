/**
 * `weft status <scheduler>`: what a running scheduler has, as a client sees it:
 * its workers (threads, status, tasks assigned, results held), its counters
 * and the datasets published. A table, or JSON with `--json`.
 */

import { Command } from "commander";
import { Client } from "../../client/client.ts";
import type { SchedulerCounters, WorkerIdentity } from "../../protocol/messagesSession.ts";
import { formatBytes } from "../../util/parseBytes.ts";
import { type CliContext, EXIT } from "./context.ts";
import { stderrLogger, timeoutMs } from "./serveUntil.ts";

/** Options of the commands that connect to a scheduler as a client. */
export interface ConnectCliOptions {
  readonly connectTimeout?: string;
}

/** Connect to `address` for the command `name`: null (said on stderr, exit 2) if it cannot. */
export async function connectFor(
  name: string,
  address: string,
  opts: ConnectCliOptions,
  ctx: CliContext,
): Promise<Client | null> {
  try {
    return await Client.connect(address, {
      name,
      timeoutMs: timeoutMs("--connect-timeout", opts.connectTimeout ?? "10000"),
      logger: stderrLogger(`weft.${name}`, "silent"),
    });
  } catch (err) {
    ctx.stderr.write(`weft ${name}: ${(err as Error).message}\n`);
    ctx.exitCode = EXIT.usage;
    return null;
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
    const rows = [
      ["worker", "threads", "status", "processing", "keys", "bytes"],
      ...workers.map((w) => [
        w.address,
        String(w.nthreads),
        w.status,
        String(w.processing),
        String(w.keys),
        formatBytes(w.nbytes),
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
    `tasks: ${counters.tasks} known, ${counters.tasksDone} done; reports: ${counters.tasksFinished} finished, ${counters.tasksErred} erred; ${counters.keysTransferred} keys transferred between workers`,
  );
  lines.push(
    `datasets: ${status.datasets.length === 0 ? "none" : status.datasets.map((d) => JSON.stringify(d)).join(", ")}`,
  );
  return `${lines.join("\n")}\n`;
}

/** `weft status ADDRESS`. */
export async function runStatus(
  address: string,
  opts: ConnectCliOptions & { readonly json?: boolean },
  ctx: CliContext,
): Promise<void> {
  const client = await connectFor("status", address, opts, ctx);
  if (client === null) return;
  try {
    const status = await clusterStatus(client);
    ctx.stdout.write(
      opts.json === true ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status),
    );
  } catch (err) {
    ctx.stderr.write(`weft status: ${(err as Error).message}\n`);
    ctx.exitCode = EXIT.differences;
  } finally {
    await client.close();
  }
}

/** `weft status`: see docs/client.md. */
export function statusCommand(ctx: CliContext): Command {
  return new Command("status")
    .description("What a running scheduler has: its workers, counters and datasets")
    .argument("<scheduler>", "the scheduler's address (tcp://host:port)")
    .option(
      "--connect-timeout <ms>",
      "how long to wait for the scheduler to accept the connection (default: 10000)",
    )
    .option("--json", "print JSON instead of a table")
    .action(async (address: string, opts: ConnectCliOptions & { json?: boolean }) => {
      await runStatus(address, opts, ctx);
    });
}
