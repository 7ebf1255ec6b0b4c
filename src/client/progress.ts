/**
 * Progress of a computation, from the scheduler's `tasksDone` counter (tasks
 * that reached memory or erred since the watch began, each counted once
 * however often it is recomputed) polled while it runs: a bar (cli-progress)
 * when the stream is a terminal, otherwise a plain line now and then. Those
 * done by erring (`tasksDoneErred`) are said beside the count, as Dask's bar
 * shows them in red: "2/2 tasks (100%)" of two that failed read as success.
 */

import { SingleBar } from "cli-progress";
import { showValue } from "../util/showValue.ts";
import { checkOptionalMs, optionsOf } from "./argChecks.ts";
import type { Client } from "./client.ts";

/** Where and how to show progress. */
export interface ProgressOptions {
  /** Where to draw (stderr, usually). */
  readonly stream: NodeJS.WritableStream & { readonly isTTY?: boolean };
  /** Shown before the bar or line. Default "tasks". */
  readonly label?: string;
  /** How often to ask the scheduler, in ms. Default 100. */
  readonly pollMs?: number;
  /** Without a terminal: a line at most this often, in ms. Default 1,000. */
  readonly lineMs?: number;
}

/** A running progress display. */
export interface ProgressWatch {
  /** Tasks done so far (as last polled). */
  readonly done: number;
  /** Stop polling; draws the final state. */
  stop(): Promise<void>;
}

/**
 * A TypeError naming the argument of {@link watchProgress} that is wrong: checked
 * before anything starts, as a bad one surfaced later, in the polling timer (a
 * symbol total threw there, uncaught, and ended the process).
 */
function checkProgressArgs(client: unknown, total: unknown, o: unknown): void {
  if (typeof (client as { counters?: unknown } | null)?.counters !== "function") {
    throw new TypeError(`watchProgress: client must be a Client, got ${showValue(client)}`);
  }
  if (!(Number.isSafeInteger(total) && (total as number) >= 0)) {
    throw new TypeError(`watchProgress: total must be an integer ≥ 0, got ${showValue(total)}`);
  }
  const options = optionsOf("watchProgress", o as ProgressOptions | undefined);
  if (typeof (options.stream as { write?: unknown } | undefined)?.write !== "function") {
    throw new TypeError(
      `watchProgress: stream must be a writable stream (process.stderr, say), got ${showValue(options.stream)}`,
    );
  }
  if (options.label !== undefined && typeof options.label !== "string") {
    throw new TypeError(`watchProgress: label must be a string, got ${showValue(options.label)}`);
  }
  checkOptionalMs("watchProgress", "lineMs", options.lineMs);
  checkOptionalMs("watchProgress", "pollMs", options.pollMs, true);
}

/**
 * Show the progress of `total` tasks the client is about to submit. Call it
 * before submitting: tasks finished before the call do not count.
 */
export async function watchProgress(
  client: Client,
  total: number,
  o: ProgressOptions,
): Promise<ProgressWatch> {
  checkProgressArgs(client, total, o);
  const label = o.label ?? "tasks";
  const start = await client.counters();
  const base = start.tasksDone;
  const baseErred = start.tasksDoneErred ?? 0;
  let done = 0;
  let erred = 0;
  let lastErred = 0;
  let lastLine = 0;
  let lastShown = -1;
  /** Why nothing may move (no worker connected), shown beside the count; "" otherwise. */
  let note = "";
  let lastNote = "";
  const bar =
    o.stream.isTTY === true
      ? new SingleBar({
          stream: o.stream,
          format: `${label} [{bar}] {percentage}% | {value}/{total} tasks{erred} | {duration_formatted}{note}`,
          hideCursor: true,
        })
      : null;
  bar?.start(total, 0, { note, erred: "" });
  /** ", 2 erred", or "" when none erred. */
  const erredText = (): string => (erred > 0 ? `, ${Math.min(erred, total)} erred` : "");
  const show = (final: boolean): void => {
    if (bar !== null) {
      bar.update(Math.min(done, total), {
        note: note === "" ? "" : ` | ${note}`,
        erred: erredText(),
      });
      return;
    }
    const now = Date.now();
    const noteChanged = note !== lastNote;
    // A task recomputed (its worker lost) counts once, but other clients' tasks done
    // meanwhile count too, so `done` may pass `total`: compare what is shown, or every
    // poll past it repeats the 100% line.
    const shown = Math.min(done, total);
    if (
      final
        ? shown === lastShown && erred === lastErred && !noteChanged
        : !noteChanged &&
          (shown === lastShown || shown === 0 || now - lastLine < (o.lineMs ?? 1_000))
    ) {
      return; // the final state is printed once, unless the last line showed it
    }
    lastLine = now;
    lastShown = shown;
    lastNote = note;
    lastErred = erred;
    const pct = total === 0 ? 100 : Math.floor((100 * shown) / total);
    const why = note === "" ? "" : `: ${note}`;
    o.stream.write(`${label}: ${shown}/${total} tasks (${pct}%)${erredText()}${why}\n`);
  };
  let polling: Promise<void> | null = null;
  let stopped = false;
  const timer = setInterval(() => {
    // One poll at a time: a scheduler slower to answer than pollMs would have
    // several in flight, answering out of order (the count going back), and
    // one answering after stop() printing after the final line.
    if (polling !== null) return;
    polling = client.counters().then(
      (c) => {
        polling = null;
        if (stopped) return;
        done = c.tasksDone - base;
        erred = (c.tasksDoneErred ?? baseErred) - baseErred;
        // Without workers nothing runs: say so rather than look stuck (it waits for one to join).
        note = c.workers === 0 ? "no workers connected, waiting for one" : "";
        show(false);
      },
      () => {
        polling = null;
      },
    );
  }, o.pollMs ?? 100);
  timer.unref();
  return {
    get done() {
      return done;
    },
    async stop() {
      clearInterval(timer);
      stopped = true;
      await polling;
      try {
        const c = await client.counters();
        done = c.tasksDone - base;
        erred = (c.tasksDoneErred ?? baseErred) - baseErred;
      } catch {
        // the client is gone: show what we had
      }
      show(true);
      bar?.stop();
    },
  };
}
