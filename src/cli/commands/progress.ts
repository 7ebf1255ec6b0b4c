import { SingleBar } from "cli-progress";
import type { CliContext } from "./context.ts";

/**
 * What every bar drawn while a synchronous loop runs (a replay, simulations) must
 * use: no signal handler runs before the loop ends, so Ctrl-C kills the process
 * with the bar up, and a bar that had hidden the cursor and turned line wrapping off
 * (cli-progress's defaults) left the terminal so. These change no terminal mode
 * (lines are cut to the terminal's width instead).
 */
export const BAR_KEEPS_TERMINAL = { hideCursor: false, linewrap: true } as const;

/** Below this many events a replay is quick: no bar. */
export const PROGRESS_MIN_EVENTS = 2_000;

/** A progress callback `(done, total)` and a way to close the bar. */
export interface Progress {
  readonly update: (done: number, total: number) => void;
  readonly stop: () => void;
}

/**
 * A progress bar on stderr, drawn only when stderr is a terminal, the work is at
 * least `minTotal` units ({@link PROGRESS_MIN_EVENTS} events by default) and it
 * has gone on for `afterMs`; otherwise callbacks that do nothing.
 */
export function progressBar(
  ctx: CliContext,
  label: string,
  options: { unit?: string; minTotal?: number; afterMs?: number } = {},
): Progress {
  if (ctx.stderr.isTTY !== true) return { update: () => {}, stop: () => {} };
  const { unit = "events", minTotal = PROGRESS_MIN_EVENTS, afterMs = 0 } = options;
  const started = Date.now();
  let bar: SingleBar | null = null;
  return {
    update: (done, total) => {
      if (bar === null) {
        if (total < minTotal || Date.now() - started < afterMs) return;
        bar = new SingleBar({
          stream: ctx.stderr,
          format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {eta_formatted}`,
          ...BAR_KEEPS_TERMINAL,
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
