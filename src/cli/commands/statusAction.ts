/**
 * What `weft status` does once its command line is parsed: status.ts, its definition,
 * imports this module only then, so that `weft status --help` loads none of it.
 */

import type { Client } from "../../client/client.ts";
import type { SchedulerCounters, WorkerIdentity } from "../../protocol/messagesSession.ts";
import { formatBytes } from "../../util/parseBytes.ts";
import { resourcesText } from "../../util/resourceAmount.ts";
import type { ConnectCliOptions } from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import { withClient } from "./withClient.ts";

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
    // The resources each has (weft worker --resources), only when some worker has one:
    // tasks restricted to a resource run only there.
    const resources = workers.some((w) => Object.keys(w.resources ?? {}).length > 0);
    const rows = [
      [
        "worker",
        ...(names ? ["name"] : []),
        "threads",
        ...(resources ? ["resources"] : []),
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
        ...(resources ? [resourcesText(w.resources ?? {}) || "-"] : []),
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
  // Of the tasks done, those done by erring (as weft run's progress says them);
  // a scheduler before the counter sends none, and is shown as before.
  const doneErred =
    counters.tasksDoneErred === undefined ? "" : ` (${counters.tasksDoneErred} by erring)`;
  lines.push(
    `tasks: ${counters.tasks} known, ${counters.tasksDone} done${doneErred}; reports: ${counters.tasksFinished} finished, ${counters.tasksErred} erred; ${counters.keysTransferred} keys transferred between workers; steals: ${counters.stealsRequested} requested, ${counters.stealsConfirmed} confirmed; ${counters.replicasDropped} replicas dropped by the active memory manager`,
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
