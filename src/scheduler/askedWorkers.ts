/**
 * What a client asks the scheduler to keep for the workers to come (a file
 * uploaded, task modules loaded) once every worker there took it: the client
 * asks the workers, then asks for the record naming them (`asked`). A worker
 * that registered meanwhile and was not asked keeps it from being recorded
 * until it is, or one that cannot take it would leave it kept against the
 * call's failure; one registering once it is kept takes it as it registers.
 */

/** The answer to such a record when the scheduler has workers the client did not ask: nothing recorded. */
export interface Unasked {
  /** The workers the scheduler has that the client did not name. */
  readonly unasked: readonly string[];
}

/**
 * The answer to a record naming `asked` while the scheduler has `workers`:
 * null if they were all asked (or `asked` is not given: a client that does
 * not name them), else {@link Unasked}. Throws a TypeError naming `op` for an
 * `asked` that is not a list of addresses.
 */
export function unaskedOf(op: string, workers: Iterable<string>, asked: unknown): Unasked | null {
  if (asked === undefined) return null;
  if (!(Array.isArray(asked) && asked.every((a) => typeof a === "string"))) {
    throw new TypeError(`${op}: asked must be an array of worker addresses`);
  }
  const named = new Set(asked);
  const unasked = [...workers].filter((w) => !named.has(w));
  return unasked.length > 0 ? { unasked } : null;
}
