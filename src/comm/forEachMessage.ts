/**
 * Reading a comm's stream of messages without keeping the last one alive.
 */

import type { Comm } from "./comm.ts";

/**
 * Hand each message received on `comm` to `onMessage`, in order, until the
 * comm closes (resolves) or breaks (rejects with its error): what
 * `for await (const msg of comm)` does, but V8 (Node 20) keeps the last value
 * of a `for await` loop alive while it waits for the next, so a large message
 * (a graph with its arguments, a peer's answer carrying a task's value) stayed
 * in memory for as long as its stream was quiet. Here no reference to a
 * message outlives its handling. An exception from `onMessage` ends the loop
 * and rejects. A promise (a thenable) it returns is awaited before the next
 * message, as in the body of a `for await` loop; its rejection ends the loop
 * and rejects alike (dropped, it reached the process as an unhandled
 * rejection, and the loop went on).
 */
export async function forEachMessage(
  comm: Comm,
  onMessage: (msg: unknown) => unknown,
): Promise<void> {
  const messages = comm[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<unknown> | null = await messages.next();
    if (next.done === true) return;
    const handled = onMessage(next.value);
    next = null;
    if (typeof (handled as PromiseLike<void> | undefined)?.then === "function") {
      await (handled as PromiseLike<void>);
    }
  }
}
