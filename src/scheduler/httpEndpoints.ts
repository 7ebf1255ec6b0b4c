/**
 * The scheduler's HTTP endpoints (`httpAddress`, `weft scheduler
 * --http-address`), as Dask's scheduler serves them beside its dashboard:
 *
 * - `/health`: `ok` while the scheduler runs; 503 and its status once it is
 *   closing or has failed (Dask answers `ok` as long as it answers at all);
 * - `/metrics`: Prometheus text (see {@link schedulerMetrics});
 * - `/json/identity.json`: the scheduler and its workers;
 * - `/json/counts.json`: the totals of `weft status` (`Client.counters`);
 * - `/status`: an HTML page of the workers, the tasks and the last runs
 *   (`statusPage.ts`).
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
import type { Scheduler } from "./scheduler.ts";
import { adaptiveTarget } from "./state/adaptive.ts";
import { SCHEDULER_TASK_STATES, type SchedulerTaskStateName } from "./state/taskState.ts";
import { renderStatusPage, statusSnapshot } from "./statusPage.ts";

/** Dask's default `target_duration` of adaptive scaling, in seconds. */
const ADAPTIVE_TARGET_SECONDS = 5;

/**
 * The scheduler's metrics, named `<namespace>_scheduler_*`: those of Dask's with
 * the same meaning keep Dask's names (`clients`, `desired_workers`, `workers`,
 * `tasks`, `tasks_output_bytes`), and weft's counters follow. Dask splits busy
 * workers into `partially_saturated` and `saturated`, which weft's scheduler
 * does not tell apart: they are `busy` here.
 */
export function schedulerMetrics(s: Scheduler, namespace: string): ScrapedMetrics {
  const state = s.state;
  const counters = () => s.countersSnapshot;
  return (
    new ScrapedMetrics(`${namespace}_scheduler`)
      .gauge("clients", "Number of clients connected", () => s.router.clients.size)
      .gauge("desired_workers", "Number of workers the scheduler needs for the work it has", () =>
        adaptiveTarget(state, ADAPTIVE_TARGET_SECONDS),
      )
      .labelledGauge(
        "workers",
        "Number of workers known by the scheduler, by state",
        ["state"],
        function* (): Iterable<Sample> {
          let running = 0;
          for (const ws of state.workers.values()) if (ws.status === "running") running++;
          const idle = [...state.idle].filter((ws) => ws.status === "running").length;
          yield [{ state: "idle" }, idle];
          yield [{ state: "busy" }, running - idle];
          yield [{ state: "paused_or_retiring" }, state.workers.size - running];
        },
      )
      .labelledGauge("tasks", "Number of tasks known by the scheduler, by state", ["state"], () => {
        // Summed over the groups, which keep their counts as tasks move: no scan of every task.
        const counts = new Map<SchedulerTaskStateName, number>();
        for (const tg of state.taskGroups.values()) {
          for (const st of SCHEDULER_TASK_STATES)
            counts.set(st, (counts.get(st) ?? 0) + tg.states[st]);
        }
        return SCHEDULER_TASK_STATES.filter((st) => st !== "forgotten").map(
          (st): Sample => [{ state: st }, counts.get(st) ?? 0],
        );
      })
      .labelledGauge(
        "tasks_output_bytes",
        "Bytes of the results in memory (one copy each), by task prefix",
        ["task_prefix_name"],
        () => {
          const bytes: Sample[] = [];
          for (const tg of state.taskGroups.values()) {
            if (tg.states.memory > 0) bytes.push([{ task_prefix_name: tg.name }, tg.memoryBytes]);
          }
          return bytes;
        },
      )
      .counter("tasks_done_total", "Tasks that ended (finished or erred) since the start", () =>
        Number(counters().tasksDone),
      )
      .counter(
        "tasks_done_erred_total",
        "Of the tasks done, those done by erring (an input's error included)",
        () => Number(counters().tasksDoneErred ?? 0),
      )
      .counter("tasks_finished_total", "task-finished reports from workers", () =>
        Number(counters().tasksFinished),
      )
      .counter("tasks_erred_total", "task-erred reports from workers", () =>
        Number(counters().tasksErred),
      )
      .counter("keys_transferred_total", "Keys workers reported fetching from peers", () =>
        Number(counters().keysTransferred),
      )
      .counter("rejected_messages_total", "Messages refused as malformed or unexpected", () =>
        Number(counters().rejectedMessages),
      )
      // Dask's stealing collector counts the requests (dask_stealing_request_count_total).
      .counter("steals_requested_total", "Steals asked of victims (work stealing)", () =>
        Number(counters().stealsRequested),
      )
      .counter("steals_confirmed_total", "Steals the victims confirmed, moving the task", () =>
        Number(counters().stealsConfirmed),
      )
      .counter(
        "replicas_dropped_total",
        "Replicas the active memory manager asked workers to drop (ReduceReplicas)",
        () => Number(counters().replicasDropped),
      )
  );
}

/** Serve the scheduler's HTTP endpoints at `address` (see the module's comment). */
export function startSchedulerHttp(
  s: Scheduler,
  address: string,
  namespace: string,
): Promise<HttpEndpoints> {
  const registry = schedulerMetrics(s, namespace).registry();
  return HttpEndpoints.start(
    address,
    {
      "/health": healthRoute(
        () => s.status === "running",
        () => s.status,
      ),
      "/metrics": metricsRoute(registry),
      "/json/identity.json": () =>
        jsonReply({
          type: "Scheduler",
          id: s.id,
          address: s.address,
          status: s.status,
          workers: Object.fromEntries(
            [...s.state.workers.values()].map((ws) => [
              ws.address,
              {
                name: ws.name,
                status: ws.status,
                nthreads: ws.nthreads,
                memoryLimit: ws.memoryLimit,
                processing: ws.processing.size,
                held: ws.hasWhat.size,
              },
            ]),
          ),
        }),
      "/json/counts.json": () => jsonReply(s.countersSnapshot),
      // Drawn on the scheduler's event loop: however many ask, a tenth of its time at most.
      "/status": throttledRoute(() => ({
        contentType: "text/html; charset=utf-8",
        body: renderStatusPage(statusSnapshot(s)),
      })),
    },
    (path, err) => s.logger.error({ err, path }, "HTTP endpoint failed"),
    {
      onRefused: (refused) =>
        s.logger.warn(
          { refused, maxConnections: MAX_CONNECTIONS },
          "HTTP connections refused: the endpoints hold at most maxConnections at once",
        ),
    },
  );
}
