/**
 * An amount of an abstract resource (`{GPU: 2}`): a finite number, not negative. The
 * scheduler, the worker and its state machine all check amounts against this one rule,
 * so that what one side takes the other does not refuse.
 */
export function isResourceAmount(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0;
}
