/**
 * Values a client hands the scheduler to keep (an event's message, metadata, a
 * published message, a variable's or queue's value, a dataset), and gets back
 * from it. They follow the rule of every other value (`protocol/values.ts`):
 * data only, copied as the wire copies it (`worker/wireClone.ts`), so that in
 * process and over TCP they arrive the same, and changing the object
 * afterwards changes nothing.
 */

import { ClonedValue } from "../comm/clonedValue.ts";
import { type CheckedClone, checkedWireClone, wireClone } from "../worker/wireClone.ts";
import { holdsFuture } from "./futureSearch.ts";

/**
 * `value` copied to send, as the wire would; a TypeError naming `what`
 * (`logEvent`) if it is not data (a function, a class instance, shared memory,
 * nesting beyond 1,000 levels).
 */
export function dataCopy(what: string, value: unknown): unknown {
  let got: CheckedClone;
  try {
    got = checkedWireClone(value, "value");
  } catch (err) {
    // A getter failing as the value is copied (read once already, by the search
    // for futures, it did not fail then): its error is kept as the cause.
    const why = err instanceof Error ? err.message : String(err);
    throw new TypeError(`${what}: the value cannot be sent: ${why}`, { cause: err });
  }
  if (got.problem === null) return got.copy;
  // A getter that threw is said where it sits, its error kept as the cause.
  throw new TypeError(
    `${what}: the value cannot be sent: ${got.problem}`,
    got.unreadable === null ? undefined : { cause: got.unreadable.cause },
  );
}

/**
 * A copy of a value the scheduler sent: in one process the scheduler's own
 * is shared by every client getting it. Values were checked as they were sent.
 */
export function receivedCopy(value: unknown): unknown {
  return wireClone(value);
}

/** `value` copied for the scheduler; TypeErrors name `what` (`logEvent`) and what the value is for. */
export function wireCopy(what: string, value: unknown, role: string): ClonedValue {
  if (holdsFuture(value, what)) {
    throw new TypeError(`${what}: a future cannot be ${role} (futures are the client's)`);
  }
  return new ClonedValue(dataCopy(what, value));
}
