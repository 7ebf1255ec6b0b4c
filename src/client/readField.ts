/**
 * Reading one field of a call's value in the walks of a call's values (the
 * argument walk of `submit`, `map` and `compute`, the future searches of
 * `gather`, Variables, Queues, datasets and `logEvent`), with what a getter
 * throws named: such a value was refused with the getter's own error
 * (`Error: boom`), saying neither the call nor where the getter sat, where
 * every other refusal of a value says both (a Proxy's trap: see proxyContents).
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

/**
 * `container[key]`, or the TypeError of {@link unreadable} naming `where(key)`
 * (the call and the field's place, built only then) if its getter throws.
 * One `where` serves every field of a container.
 */
export function readField<K extends string | number>(
  container: object,
  key: K,
  where: (key: K) => string,
): unknown {
  try {
    return (container as Record<K, unknown>)[key];
  } catch (err) {
    throw unreadable(where(key), GETTER_THREW, err);
  }
}
