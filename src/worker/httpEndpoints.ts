/**
 * The worker's HTTP endpoints (`httpAddress`, `weft worker --http-address`), as
 * Dask's worker serves them:
 *
 * - `/health`: `ok` while the worker runs (or is paused); 503 and its status
 *   otherwise;
 * - `/metrics`: Prometheus text (see {@link workerMetrics});
 * - `/json/identity.json`: the worker (address, name), its scheduler and its threads;
 * - `/status`: an HTML page of what it holds and does (see `statusPage.ts`).
 */

import {
  HttpEndpoints,
  healthRoute,
  jsonReply,
  MAX_CONNECTIONS,
  metricsRoute,
} from "../comm/httpEndpoints.ts";
import { throttledRoute } from "../comm/throttledRoute.ts";
import { type Sample, ScrapedMetrics } from "../util/promRegistry.ts";
import { TASK_STATES, type TaskStateState } from "./state/taskState.ts";
import { renderWorkerStatusPage, type WorkerView, workerStatusSnapshot } from "./statusPage.ts";
import type { Worker } from "./worker.ts";

/**
 * The worker's metrics, named `<namespace>_worker_*` with Dask's names: `tasks`
 * by state (the values spilled to disk as state `disk`, as Dask's), `threads`,
 * `memory_bytes` (`managed`: the results' bytes in memory, at most the process's
 * resident memory; `unmanaged`: the rest of it; `spilled`: the results on disk,
 * as measured in memory), the transfers from and to peers, and with a memory
 * limit the spills (`spill_count_total`, by Dask's label `activity`). Workers
 * of one process (a `LocalCluster`) share its resident memory: each reports
 * all of it.
 */
export function workerMetrics(w: WorkerView, namespace: string): ScrapedMetrics {
  const state = w.state;
  const out = w.dataServer;
  return new ScrapedMetrics(`${namespace}_worker`)
    .labelledGauge("tasks", "Number of tasks at the worker, by state", ["state"], () => {
      // The state machine keeps these counts (its task counter, checked against its tasks).
      const counts = new Map<TaskStateState, number>();
      for (const { state: st, value } of state.taskCounter.currentCount(false))
        counts.set(st, value);
      const spilled = w.spillStats?.spilledKeys ?? 0;
      const samples: Sample[] = [];
      for (const st of TASK_STATES) {
        if (st === "forgotten") continue;
        const n = counts.get(st) ?? 0;
        if (st === "memory" && w.spillStats !== null) {
          samples.push(
            [{ state: "memory" }, Math.max(0, n - spilled)],
            [{ state: "disk" }, spilled],
          );
        } else {
          samples.push([{ state: st }, n]);
        }
      }
      return samples;
    })
    .gauge("threads", "Number of worker threads", () => state.nthreads)
    .labelledGauge("memory_bytes", "Memory breakdown", ["type"], () => {
      const rss = process.memoryUsage.rss();
      const spilled = w.spillStats?.spilledBytes ?? 0;
      const managed = Math.max(0, Math.min(rss, state.nbytes - spilled));
      return [
        [{ type: "managed" }, managed],
        [{ type: "unmanaged" }, rss - managed],
        [{ type: "spilled" }, spilled],
      ];
    })
    .gauge(
      "transfer_incoming_bytes",
      "Total size of open data transfers from other workers",
      () => state.transferIncomingBytes,
    )
    .gauge(
      "transfer_incoming_count",
      "Number of open data transfers from other workers",
      () => state.transferIncomingCount,
    )
    .counter(
      "transfer_incoming_count_total",
      "Total number of data transfers from other workers since the worker was started",
      () => state.transferIncomingCountTotal,
    )
    .gauge(
      "transfer_outgoing_bytes",
      "Total size of open data transfers to other workers",
      () => out.outgoingBytes,
    )
    .gauge(
      "transfer_outgoing_count",
      "Number of open data transfers to other workers",
      () => out.outgoingCount,
    )
    .counter(
      "transfer_outgoing_count_total",
      "Total number of data transfers to other workers since the worker was started",
      () => out.outgoingCountTotal,
    )
    .counter(
      "transfer_outgoing_bytes_total",
      "Total size of data transfers to other workers since the worker was started",
      () => out.outgoingBytesTotal,
    )
    .labelledCounter(
      "spill_count_total",
      "Values written to disk (disk_write) and read back (disk_read) since the worker started (with a memory limit)",
      ["activity"],
      () => {
        const stats = w.spillStats;
        if (stats === null) return [];
        return [
          [{ activity: "disk_write" }, stats.spillCount],
          [{ activity: "disk_read" }, stats.unspillCount],
        ];
      },
    );
}

/** Serve the worker's HTTP endpoints at `address` (see the module's comment). */
export function startWorkerHttp(
  w: WorkerView & Pick<Worker, "logger">,
  address: string,
  namespace: string,
): Promise<HttpEndpoints> {
  const registry = workerMetrics(w, namespace).registry();
  return HttpEndpoints.start(
    address,
    {
      "/health": healthRoute(
        () => w.status === "running" || w.status === "paused",
        () => w.status,
      ),
      "/metrics": metricsRoute(registry),
      "/json/identity.json": () =>
        jsonReply({
          type: "Worker",
          address: w.status === "init" || w.status === "starting" ? null : w.address,
          name: w.options.name,
          scheduler: w.options.scheduler,
          status: w.status,
          nthreads: w.state.nthreads,
          executor: w.options.executor,
          memoryLimit: w.options.memoryLimit,
        }),
      // Drawn on the worker's event loop: however many ask, a tenth of its time at most.
      "/status": throttledRoute(() => ({
        contentType: "text/html; charset=utf-8",
        body: renderWorkerStatusPage(workerStatusSnapshot(w)),
      })),
    },
    (path, err) => w.logger.error({ err, path }, "HTTP endpoint failed"),
    {
      onRefused: (refused) =>
        w.logger.warn(
          { refused, maxConnections: MAX_CONNECTIONS },
          "HTTP connections refused: the endpoints hold at most maxConnections at once",
        ),
    },
  );
}
