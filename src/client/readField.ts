/**
 * The error of a field of a call's value that cannot be read, for the walks of
 * a call's values (the argument walk of `submit`, `map` and `compute`, the
 * future searches of `gather`, Variables, Queues, datasets and `logEvent`),
 * which read each field in a `try` of their own (a function call and a closure
 * per container made them 2-3× as slow): a getter's error was the refusal
 * itself (`Error: boom`), saying neither the call nor where the getter sat,
 * where every other refusal of a value says both (a Proxy's trap: see
 * proxyContents).
 */

/**
 * The TypeError `${where} cannot be read (${how}): Error: boom` for `err`,
 * thrown reading a value (`how`: "a getter threw", "a Proxy whose trap
 * threw"), its `cause` the error itself.
 */
export function unreadable(where: string, how: string, err: unknown): TypeError {
  const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new TypeError(`${where} cannot be read (${how}): ${why}`, { cause: err });
}

/** How a getter's error is said by {@link unreadable}. */
export const GETTER_THREW = "a getter threw";
