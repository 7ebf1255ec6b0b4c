/**
 * `print` and `warn` for task code (Dask's `distributed.print` and
 * `distributed.warn`): inside a task (or an actor's method), the text goes to
 * the clients of the cluster, as an event of topic `print` or `warn` that
 * each client prints on its own stdout or stderr (unless made with
 * `printTaskOutput: false`); outside one, it is printed here. A task on a
 * worker of another machine shows its output where the user is looking. A
 * task's result is reported once its lines have reached the scheduler, so
 * that a client gets them before the result.
 *
 * ```ts
 * export const train = defineTask("train", async (epochs: number) => {
 *   for (let e = 0; e < epochs; e++) print(`epoch ${e}: loss ${loss()}`);
 * });
 * ```
 */

import { format } from "node:util";
import { currentTaskKey, taskClient, trackTaskMessage } from "../worker/taskContext.ts";
import type { ClusterEvent } from "./events.ts";

/** What a task printed: its text (formatted as `console.log` formats) and the task's key. */
export interface PrintedMessage {
  /** What the task printed, formatted as `console.log` formats its arguments. */
  readonly text: string;
  /** The key of the task that printed it. */
  readonly key: string;
}

function send(topic: "print" | "warn", text: string, local: (text: string) => void): void {
  let key: string;
  let client: Promise<unknown>;
  try {
    key = currentTaskKey();
    client = taskClient();
  } catch {
    local(text); // not in a task
    return;
  }
  const msg: PrintedMessage = { text, key };
  const sent = client
    .then((c) => (c as { logEvent(t: string, m: unknown): Promise<void> }).logEvent(topic, msg))
    .catch(() => local(text)); // no client (its worker closing): printed here at least
  // The task's result waits for it: its lines reach the clients before its result.
  trackTaskMessage(sent);
}

function toStdout(text: string): void {
  process.stdout.write(`${text}\n`);
}

function toStderr(text: string): void {
  process.stderr.write(`${text}\n`);
}

/**
 * Print `args` (formatted as `console.log` does) on the stdout of the
 * cluster's clients when called in a task, else on this process's stdout. It
 * does not wait; one task's lines come in the order printed.
 */
export function print(...args: unknown[]): void {
  send("print", format(...args), toStdout);
}

/** As {@link print}, on stderr (topic `warn`). */
export function warn(...args: unknown[]): void {
  send("warn", format(...args), toStderr);
}

/** A client's handler of `print` or `warn` events: the text on `out`. */
export function printedTo(out: (text: string) => void): (event: ClusterEvent) => void {
  return ([, msg]) => {
    const text =
      typeof msg === "object" &&
      msg !== null &&
      typeof (msg as { text?: unknown }).text === "string"
        ? (msg as PrintedMessage).text
        : format(msg);
    out(text);
  };
}

/** The handlers a client subscribes with `printTaskOutput`. */
export const TASK_OUTPUT_TOPICS = [
  ["print", printedTo(toStdout)],
  ["warn", printedTo(toStderr)],
] as const;
