/**
 * How the worker process a nanny started ends, whatever is left running in it:
 * a worker process that has closed exits, though a task left a timer or a
 * socket that would keep it alive (an abandoned task on the inline executor).
 * Its nanny waits for that exit to start the next worker (on a restart, for a
 * whole `client.restart()`), and a nanny that is gone waits for nothing.
 */

/**
 * How long a closed worker process is given to exit by itself (its last output
 * flushed) before it is ended, whatever a task left running in it.
 */
const CLOSED_EXIT_GRACE_MS = 1_000;

/**
 * The worker has closed: end the process {@link CLOSED_EXIT_GRACE_MS} from now
 * if it has not exited by then, with the exit code the command set meanwhile
 * (`process.exitCode`). The timer does not keep the process alive.
 */
export function exitOnceClosed(): void {
  setTimeout(() => process.exit(), CLOSED_EXIT_GRACE_MS).unref();
}
