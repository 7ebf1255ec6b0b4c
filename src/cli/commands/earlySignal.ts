/**
 * A SIGINT or SIGTERM that reached `weft worker` or `weft scheduler` while its modules
 * were still loading (about 1 s through tsx), before the command could listen for it.
 * bin/weft.js records it (see {@link EarlySignals}); the command's {@link untilSignal}
 * claims the record as it starts listening and honours a signal recorded, so that such
 * a signal closes the command with exit 0 as one a moment later does, not kill it (143).
 */

/** What bin/weft.js puts on `globalThis` under {@link EARLY_SIGNALS_KEY}. */
export interface EarlySignals {
  /**
   * Stop recording (the caller listens from now on) and return the signal recorded,
   * or null. Once claimed, bin/weft.js neither records nor raises anything again.
   */
  claim(): NodeJS.Signals | null;
}

/** The key of the record: a registered symbol, which bin/weft.js (plain JS) names too. */
export const EARLY_SIGNALS_KEY: unique symbol = Symbol.for("weft.earlySignals");

/**
 * The signal of `signals` recorded before this process's command listened, or null;
 * claims the record either way (at most once in a process: later calls get null). A
 * signal recorded that `signals` does not name (SIGINT for a worker under a nanny,
 * which listens for SIGTERM alone) is dropped, as it would have been ignored.
 */
export function claimEarlySignal(signals: readonly NodeJS.Signals[]): NodeJS.Signals | null {
  const holder = globalThis as { [EARLY_SIGNALS_KEY]?: EarlySignals };
  const record = holder[EARLY_SIGNALS_KEY];
  if (record === undefined) return null;
  delete holder[EARLY_SIGNALS_KEY];
  const signal = record.claim();
  return signal !== null && signals.includes(signal) ? signal : null;
}
