/**
 * The hidden partial files `writeWholeFile` and `replaceWholeFile` (the scheduler
 * file's) are writing (`.NAME.<uuid>.partial`, renamed over the file once whole), and, for the command line, their removal
 * when SIGINT or SIGTERM ends the process meanwhile. A Ctrl-C during `weft dump`,
 * `weft sim --dump` or `weft profile -o` killed the process with the signal's
 * default action, leaving the partial file beside the target for good.
 *
 * Off unless {@link removePartialFilesOnSignals} is called (`weft`'s own process
 * does): a program using the client keeps its own signal handling. Even then the
 * signals are listened for only while a partial file is being written: listened
 * for all the time, a process busy in a long synchronous step (a simulation, the
 * encoding of a dump) would no longer die of a Ctrl-C until that step ended.
 * One a process killed outright left (`kill -9`) is removed by a later write of
 * the same file (hiddenLeftovers.ts).
 */

import { rmSync } from "node:fs";

const SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** The partial files being written now. */
const partials = new Set<string>();
/** Set by {@link removePartialFilesOnSignals}. */
let removeOnSignals = false;
let listening = false;

/** `path` is being written: removed, should a signal end the process first. */
export function partialFileStarted(path: string): void {
  partials.add(path);
  if (removeOnSignals && !listening) listen();
}

/** `path` is written (renamed) or removed: no longer this module's. */
export function partialFileEnded(path: string): void {
  partials.delete(path);
  if (partials.size === 0 && listening) stopListening();
}

/**
 * From now on, SIGINT or SIGTERM that comes while a partial file is being
 * written, and that nothing else in the process listens for, removes every
 * partial file, then ends the process as the signal would have (killed by it).
 */
export function removePartialFilesOnSignals(): void {
  removeOnSignals = true;
  if (partials.size > 0 && !listening) listen();
}

function listen(): void {
  listening = true;
  // First: a command's own listener (`once`, taken off as it runs) is still there
  // to be counted, and the signal is then that command's to handle.
  for (const s of SIGNALS) process.prependListener(s, onSignal);
}

function stopListening(): void {
  listening = false;
  for (const s of SIGNALS) process.removeListener(s, onSignal);
}

function onSignal(signal: NodeJS.Signals): void {
  // A command that handles the signal (weft profile's Ctrl-C ends the profile early,
  // then writes it) still writes its file whole.
  if (process.listenerCount(signal) > 1) return;
  for (const path of partials) rmSync(path, { force: true });
  partials.clear();
  stopListening();
  // With no listener left, the signal's default action: the process ends as before.
  process.kill(process.pid, signal);
}
