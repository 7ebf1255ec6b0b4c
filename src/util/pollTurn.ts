/**
 * One turn of the event loop that passes through its poll phase, where Node.js
 * sees the signals (SIGINT, SIGTERM) that came meanwhile, for synchronous work
 * that yields now and then to notice them. A lone `setImmediate` does not do it
 * when the work runs from a poll-phase callback (an I/O completion, as the
 * command's start is): its callback runs in the check phase of the same turn,
 * before the next poll, so that a signal that came during the work was seen only
 * after one more slice of it (`weft sim --runs` ran one more seed). A second
 * `setImmediate` queued from the first runs in the next turn's check phase,
 * after its poll, whichever phase the work ran from.
 */
export function pollTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}
