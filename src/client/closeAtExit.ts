/**
 * Closing the clients a program left open once it has nothing left to run
 * (Node.js's `beforeExit`), as Dask closes its client at the interpreter's
 * exit (`atexit`). A client over TCP keeps the process alive only while
 * something waits on it (see `LoopHold`): a program that forgot
 * `client.close()` ends after its last line, and this close first sends what
 * it queued (a `Pub.put`, `logEvent`, `fireAndForget`, the release of its
 * futures), tells the scheduler it leaves, and waits until the scheduler has
 * taken it all, where the process ending at once could cut the connection
 * with some of it unsent.
 */

/** What is closed at exit. */
export interface ClosableAtExit {
  close(): Promise<void>;
}

const open = new Set<ClosableAtExit>();

function onBeforeExit(): void {
  const left = [...open];
  open.clear();
  process.off("beforeExit", onBeforeExit);
  // The closes are work to run: Node.js runs them, then ends the process.
  for (const client of left) client.close().catch(() => {});
}

/** Close `client` if it is still open when the program ends; returns what forgets it (its own close). */
export function closeAtExit(client: ClosableAtExit): () => void {
  if (open.size === 0) process.on("beforeExit", onBeforeExit);
  open.add(client);
  return () => {
    if (!open.delete(client)) return;
    if (open.size === 0) process.off("beforeExit", onBeforeExit);
  };
}
