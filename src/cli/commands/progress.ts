import { SingleBar } from "cli-progress";
import type { CliContext } from "./context.ts";

/** Below this many events a replay is quick: no bar. */
export const PROGRESS_MIN_EVENTS = 2_000;

/** A progress callback `(done, total)` and a way to close the bar. */
export interface Progress {
  readonly update: (done: number, total: number) => void;
  readonly stop: () => void;
}

/**
 * A progress bar on stderr, drawn only when stderr is a terminal and the work is at
 * least {@link PROGRESS_MIN_EVENTS} events; otherwise callbacks that do nothing.
 */
export function progressBar(ctx: CliContext, label: string): Progress {
  if (ctx.stderr.isTTY !== true) return { update: () => {}, stop: () => {} };
  let bar: SingleBar | null = null;
  return {
    update: (done, total) => {
      if (bar === null) {
        if (total < PROGRESS_MIN_EVENTS) return;
        bar = new SingleBar({
          stream: ctx.stderr,
          format: `${label} [{bar}] {percentage}% | {value}/{total} events | {eta_formatted}`,
          hideCursor: true,
          clearOnComplete: true,
        });
        bar.start(total, done);
      } else {
        bar.update(done);
      }
    },
    stop: () => {
      bar?.stop();
      bar = null;
    },
  };
}
