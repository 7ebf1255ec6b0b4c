/**
 * The clients of the workers' tasks (`getClient()`, on the worker's main
 * thread or a pool thread), by the worker they serve, which each names when it
 * registers. A worker the scheduler removes without telling it to close (it
 * missed its heartbeats, or its connection broke: frozen, cut off) may keep
 * those clients' connections open, and with them the locks and leases its
 * tasks took, for as long as it is frozen: the tasks it ran, given to other
 * workers, would then wait on those locks for good. So the scheduler ends those
 * clients' connections with the worker, and they leave as any client whose
 * connection ends: their leases released, their waiting calls dropped (and
 * before that their leases expire, unrefreshed, after `leaseTimeoutMs`, as
 * Dask's do). While the worker heartbeats, its clients' leases are not
 * expired (see `Scheduler.expireLeases`).
 */

import { CommAbortedError } from "../comm/errors.ts";

/** Ends a client's connection, saying why. */
export type CutConnection = (err: Error) => void;

/** The task clients of each worker (see the module comment). */
export class WorkerClients {
  private readonly byWorker = new Map<string, Map<string, CutConnection>>();
  /** The worker of each client, the other way round. */
  private readonly workerByClient = new Map<string, string>();

  /** Client `client`, whose connection `cut` ends, serves the tasks of the worker at `worker`. */
  add(worker: string, client: string, cut: CutConnection): void {
    let clients = this.byWorker.get(worker);
    if (clients === undefined) this.byWorker.set(worker, (clients = new Map()));
    clients.set(client, cut);
    this.workerByClient.set(client, worker);
  }

  /** The address of the worker client `client` serves the tasks of; undefined if none. */
  workerOf(client: string): string | undefined {
    return this.workerByClient.get(client);
  }

  /** Client `client` of the worker at `worker` left. */
  delete(worker: string, client: string): void {
    const clients = this.byWorker.get(worker);
    if (clients === undefined) return;
    clients.delete(client);
    this.workerByClient.delete(client);
    if (clients.size === 0) this.byWorker.delete(worker);
  }

  /** The worker at `worker` was removed: end its clients' connections. Their ids. */
  letGo(worker: string): string[] {
    const clients = this.byWorker.get(worker);
    if (clients === undefined) return [];
    this.byWorker.delete(worker);
    for (const client of clients.keys()) this.workerByClient.delete(client);
    for (const cut of clients.values()) {
      cut(new CommAbortedError(`the worker ${worker} this client served was removed`));
    }
    return [...clients.keys()];
  }

  /** How many clients are recorded for the worker at `worker`. */
  count(worker: string): number {
    return this.byWorker.get(worker)?.size ?? 0;
  }
}
