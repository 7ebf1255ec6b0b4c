/**
 * How a nanny waits for its worker process to end. Node emits `error` on a
 * child process for a spawn that failed, but also later, for a signal it could
 * not send (`kill()`) or a message it could not send without a callback: only
 * the first is the end of the child (it never ran). A later one is told of and
 * the wait goes on, as Dask's nanny goes on watching a process it could not
 * signal: taken as an end, it would leave the worker running unwatched, and a
 * second one, heard by no listener, would crash the nanny.
 */

import type { ChildProcess } from "node:child_process";

/**
 * How long a nanny waits, once its worker process exited, for the rest of its
 * output to come through the pipes before it goes on without it.
 */
export const OUTPUT_DRAIN_MS = 3_000;

/** How a worker process ended: its exit code (2 if it never started), or the signal that killed it. */
export interface ChildEnd {
  readonly code: number;
  readonly signal: NodeJS.Signals | null;
}

/**
 * The end of `child` (just spawned): its exit, once its output is forwarded
 * or {@link OUTPUT_DRAIN_MS} later; `{code: 2}` if it could not be started.
 * `say` hears a line for each thing worth telling (without its prefix).
 */
export function childExit(
  child: ChildProcess,
  say: (line: string) => void,
  drainMs: number = OUTPUT_DRAIN_MS,
): Promise<ChildEnd> {
  return new Promise((resolve) => {
    let spawned = false;
    let ended = false;
    child.once("spawn", () => {
      spawned = true;
    });
    child.on("error", (err) => {
      if (ended) return;
      if (!spawned) {
        ended = true;
        say(`cannot start a worker process: ${err.message}`);
        resolve({ code: 2, signal: null });
        return;
      }
      say(`an operation on the worker process failed (${err.message}): it runs on, still watched`);
    });
    child.once("exit", (code, signal) => {
      if (ended) return;
      ended = true;
      // "close" comes once its output is forwarded, unless a process it started (a
      // task's child, detached) holds the pipes open: not waited on for good.
      const forwarded = () => {
        clearTimeout(cutOff);
        resolve({ code: code ?? 1, signal });
      };
      const cutOff = setTimeout(() => {
        say(
          "the worker process exited, but a process it started still holds its output open: that output is no longer forwarded",
        );
        child.stdout?.destroy();
        child.stderr?.destroy();
        forwarded();
      }, drainMs);
      child.once("close", forwarded);
    });
  });
}
