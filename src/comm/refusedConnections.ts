/**
 * Connections a server refused over its `maxConnections`, told to whoever
 * runs it. Node drops them without a word: an operator whose load balancer
 * or liveness probe can no longer reach `/health` (and who may see the
 * process restarted for it) would find nothing in the logs to say why.
 */

import type { EventEmitter } from "node:events";

/** How often, at most, refusals are told after the first (a flood would otherwise log a line per connection). */
export const REFUSED_REPORT_MS = 10_000;

/**
 * Tell `onRefused` of the connections `server` (a `net.Server`) drops: the first at once, then
 * how many were dropped since, at most once per {@link REFUSED_REPORT_MS}.
 * Returns what stops it (a count not yet told is told then).
 */
export function reportRefusedConnections(
  server: EventEmitter,
  onRefused: (refused: number) => void,
): () => void {
  let refused = 0;
  let quiet: NodeJS.Timeout | null = null;
  const tell = () => {
    quiet = null;
    if (refused === 0) return;
    const n = refused;
    refused = 0;
    onRefused(n);
    // Nothing left to tell holds the process up.
    quiet = setTimeout(tell, REFUSED_REPORT_MS).unref();
  };
  const dropped = () => {
    refused++;
    if (quiet === null) tell();
  };
  server.on("drop", dropped);
  return () => {
    server.off("drop", dropped);
    if (quiet !== null) clearTimeout(quiet);
    quiet = null;
    if (refused > 0) onRefused(refused);
    refused = 0;
  };
}
