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
 *
 * The close waits for the program's own `beforeExit` listeners, which run in
 * the same turn whether added before or after this one: one that starts more
 * work (a last `submit` awaited, a summary written to a file, then gathered)
 * has it done with the client still open, and `beforeExit` comes again once
 * it is. Dask's `atexit` handlers run last registered first, so that a
 * program's own, registered after the client's, runs with the client open.
 */

/** What is closed at exit. */
export interface ClosableAtExit {
  close(): Promise<void>;
}

const open = new Set<ClosableAtExit>();
/** The look, once the `beforeExit` listeners ran, at whether they started work. */
let look: NodeJS.Immediate | null = null;

/**
 * What Node.js lists as its resources (`process.getActiveResourcesInfo()`),
 * but for the immediates: more of them than at `beforeExit` is work started.
 * Not none: a stdout or stderr piped is listed, though it holds nothing.
 */
function resourceCount(): number {
  return process.getActiveResourcesInfo().filter((r) => r !== "Immediate").length;
}

function onBeforeExit(): void {
  if (look !== null) return;
  // First of the listeners (prepended): nothing of theirs is counted yet.
  const idle = resourceCount();
  look = setImmediate(() => closeUnlessWorkStarted(idle));
}

/**
 * Close the clients left open, unless a `beforeExit` listener started work
 * (a request to the scheduler, a timer, a file read): `beforeExit` comes
 * again once it is done.
 */
function closeUnlessWorkStarted(idle: number): void {
  look = null;
  if (resourceCount() > idle) return;
  const left = [...open];
  open.clear();
  process.off("beforeExit", onBeforeExit);
  // The closes are work to run: Node.js runs them, then ends the process.
  for (const client of left) client.close().catch(() => {});
}

/** Close `client` if it is still open when the program ends; returns what forgets it (its own close). */
export function closeAtExit(client: ClosableAtExit): () => void {
  if (open.size === 0) process.prependListener("beforeExit", onBeforeExit);
  open.add(client);
  return () => {
    if (!open.delete(client)) return;
    if (open.size === 0) process.off("beforeExit", onBeforeExit);
  };
}
