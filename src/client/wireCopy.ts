/**
 * A value a client hands the scheduler to keep (an event's message, metadata):
 * copied now with the structured-clone algorithm, so that changing the object
 * afterwards changes nothing, and refused if it holds a future (futures are
 * the client's) or cannot be cloned (a function, a symbol).
 */

import { ClonedValue } from "../comm/clonedValue.ts";
import { searchFutures } from "./futureSearch.ts";

/** `value` copied for the scheduler; TypeErrors name `what` (`logEvent`) and what the value is for. */
export function wireCopy(what: string, value: unknown, role: string): ClonedValue {
  searchFutures(value, what, () => {
    throw new TypeError(`${what}: a future cannot be ${role} (futures are the client's)`);
  });
  try {
    return new ClonedValue(structuredClone(value));
  } catch (err) {
    throw new TypeError(
      `${what}: the value cannot be sent: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
