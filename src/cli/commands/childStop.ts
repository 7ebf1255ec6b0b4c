/**
 * How a nanny stops its worker process: a SIGTERM, then, if the process has
 * not exited within a grace, a SIGKILL, as Dask's `WorkerProcess.kill` asks
 * its process to close, joins it for a while, then kills it. A worker whose
 * event loop is blocked (a preload or task module in a synchronous loop)
 * never hears the SIGTERM, and one whose close never ends never exits: without
 * the SIGKILL its nanny, and whoever stopped it (systemd, a Ctrl-C), would
 * wait for good.
 */

import type { ChildProcess } from "node:child_process";
import { WORKER_CLOSE_MAX_MS } from "../../util/closeBudget.ts";

/**
 * How long a nanny waits for its worker process to exit once it sent it
 * SIGTERM (100 s): what a `weft worker`'s close may take at most, each of
 * its waits on code it does not control (plugins' and preloads' teardowns,
 * the running tasks) up to `worker.close()`'s default timeout, and some slack.
 */
export const CHILD_STOP_GRACE_MS = WORKER_CLOSE_MAX_MS;

/** The children SIGKILLed already. */
const sigkilled = new WeakSet<ChildProcess>();

/**
 * Send `child` SIGTERM, and SIGKILL if it has not exited `graceMs` later,
 * telling `killed` then. Returns a function that calls the SIGKILL off (the
 * child exited): the timer would keep the nanny alive until the grace is over.
 */
export function terminateWithin(
  child: ChildProcess,
  graceMs: number,
  killed: (graceMs: number) => void,
): () => void {
  child.kill("SIGTERM");
  return killAfter(child, graceMs, killed);
}

/**
 * SIGKILL `child` if it has not exited `graceMs` from now (it said it is
 * closing, on its own), telling `killed` then. Returns a function that calls
 * it off.
 */
export function killAfter(
  child: ChildProcess,
  graceMs: number,
  killed: (graceMs: number) => void,
): () => void {
  const timer = setTimeout(() => {
    if (child.exitCode !== null || child.signalCode !== null || sigkilled.has(child)) return;
    // A stop's grace and a close's may both run out: one SIGKILL, said once.
    sigkilled.add(child);
    child.kill("SIGKILL");
    killed(graceMs);
  }, graceMs);
  return () => clearTimeout(timer);
}
