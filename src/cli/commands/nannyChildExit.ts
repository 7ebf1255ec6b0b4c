/**
 * How the worker process a nanny started ends, whatever is left running in it.
 *
 * A worker whose nanny is gone (SIGKILLed, say) has nobody to restart it, to
 * stop it or to report to: it closes, in order but briefly, and its process
 * must then be gone. Dask's worker process exits at once when its nanny dies
 * (`AsyncProcess._immediate_exit_when_closed`: `os._exit(-1)` from a thread
 * watching the parent's pipe); weft gives the close a few seconds first (its
 * plugins' and preloads' teardowns, what finished handed to the scheduler), but
 * no more: its process is SIGKILLed {@link NANNY_GONE_EXIT_MS} after the nanny
 * went, by a thread of its own, as a synchronous task on the inline executor
 * blocks the event loop that would hear the nanny go, for as long as it runs.
 *
 * And a worker process that has closed exits, though a task left a timer or a
 * socket that would keep it alive (an abandoned task on the inline executor):
 * its nanny waits for that exit to start the next worker (on a restart, for a
 * whole `client.restart()`), and a nanny that is gone waits for nothing.
 */

import { Worker as Thread } from "node:worker_threads";
import { WORKER_CLOSE_WAITS } from "../../util/closeBudget.ts";

/**
 * The timeout, in seconds, of each of the close's waits (plugins' teardowns,
 * preloads' teardowns, running tasks) in a worker whose nanny is gone: a tenth
 * of a stopped worker's, as nobody is there to wait for it.
 */
export const NANNY_GONE_CLOSE_TIMEOUT_S = 3;

/**
 * How long after its nanny is gone a worker process is SIGKILLed at the latest
 * (12 s): its close's waits, and 3 s for the rest of the close.
 */
export const NANNY_GONE_EXIT_MS = (WORKER_CLOSE_WAITS * NANNY_GONE_CLOSE_TIMEOUT_S + 3) * 1000;

/** How often the watching thread looks whether the nanny is still the parent. */
const NANNY_WATCH_POLL_MS = 250;

/**
 * The watching thread (CommonJS, evaluated): once the process's parent is no
 * longer the nanny (it died: the process went to another parent), SIGKILL the
 * process `exitMs` after the nanny was last seen its parent, or after the
 * process began (`bornAt`) if never: a nanny that died while its worker still
 * loaded, before the watch began, died after that. `process.ppid` is asked
 * anew each time; a signal to its own process is what a thread may send while
 * the main thread is blocked. The line saying why goes straight to file
 * descriptor 2: a thread's `process.stderr` is written by the main thread, the
 * one blocked, and the kill would leave the worker's end unexplained.
 */
const WATCH_SOURCE = `
const { workerData } = require("node:worker_threads");
const { writeSync } = require("node:fs");
const { nanny, exitMs, pollMs, bornAt } = workerData;
let seen = bornAt;
const poll = setInterval(() => {
  if (process.ppid === nanny) {
    seen = Date.now();
    return;
  }
  clearInterval(poll);
  setTimeout(() => {
    try {
      writeSync(2, "weft worker: its nanny has been gone " + exitMs / 1000 + " s and its close has not ended (a task may block its event loop): killing its process\\n");
    } catch {
      // A closed stderr (EPIPE) must not spare the process the kill.
    }
    process.kill(process.pid, "SIGKILL");
  }, Math.max(0, seen + exitMs - Date.now()));
}, pollMs);
`;

/**
 * Watch, from a thread of its own, that the nanny (process `nannyPid`) is still
 * this process's parent: once it is not, this process is SIGKILLed `exitMs`
 * (default {@link NANNY_GONE_EXIT_MS}) after the nanny was last seen, or after
 * the process began, whatever its main thread does.
 * The thread does not keep the process alive; `failed` hears if it cannot run
 * (the worker then still closes when its main thread hears the nanny go).
 * Returns a function that stops it.
 */
export function watchNanny(
  nannyPid: number,
  failed: (err: Error) => void,
  exitMs: number = NANNY_GONE_EXIT_MS,
): () => void {
  const thread = new Thread(WATCH_SOURCE, {
    eval: true,
    // None of the process's flags (`--input-type=module` would make the source ESM; a
    // loader's `--import` would load it into the thread too).
    execArgv: [],
    workerData: {
      nanny: nannyPid,
      exitMs,
      pollMs: NANNY_WATCH_POLL_MS,
      bornAt: Date.now() - process.uptime() * 1000,
    },
  });
  // Unhandled, a thread's error would end the worker it is there to end in order.
  thread.on("error", failed);
  thread.unref();
  return () => void thread.terminate();
}

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
