/**
 * What a client asks the scheduler to keep for the workers to come (a file
 * uploaded, task modules loaded) once every worker there took it: the client
 * asks the workers, then asks for the record naming them (`asked`). A worker
 * that registered meanwhile and was not asked keeps it from being recorded
 * until it is, or one that cannot take it would leave it kept against the
 * call's failure; one registering once it is kept takes it as it registers.
 *
 * An address names no process: a worker restarted at the address of one asked
 * (a nanny's, on a fixed port) registered too late to take the record, and was
 * never asked. So the client also names the registrations it asked (`askedIds`,
 * each worker's `id` as `workers` lists it, see {@link RegisteredWorkers}),
 * which a worker registering anew does not have.
 */

/** The answer to such a record when the scheduler has workers the client did not ask: nothing recorded. */
export interface Unasked {
  /** The workers the scheduler has that the client did not name. */
  readonly unasked: readonly string[];
}

/** The registrations the client asked, and those of the workers there. */
export interface RegisteredWorkers {
  /** The `askedIds` of the record: unchecked, as the client sent them. */
  readonly askedIds: unknown;
  /** The registration of the worker at `address` (its `id`), if it has one. */
  idOf(address: string): string | undefined;
}

/**
 * The answer to a record naming `asked` while the scheduler has `workers`:
 * null if they were all asked (or `asked` is not given: a client that does
 * not name them), else {@link Unasked}. With `registered.askedIds` given, a
 * worker with a registration counts as asked only if that registration was.
 * Throws a TypeError naming `op` for an `asked` that is not a list of
 * addresses, or `askedIds` that is not a list of registrations.
 */
export function unaskedOf(
  op: string,
  workers: Iterable<string>,
  asked: unknown,
  registered?: RegisteredWorkers,
): Unasked | null {
  if (asked === undefined) return null;
  if (!isStringList(asked))
    throw new TypeError(`${op}: asked must be an array of worker addresses`);
  const askedIds = registered?.askedIds;
  if (askedIds !== undefined && !isStringList(askedIds)) {
    throw new TypeError(`${op}: askedIds must be an array of worker ids`);
  }
  const named = new Set(asked);
  const namedIds = askedIds === undefined ? null : new Set(askedIds);
  const unasked = [...workers].filter((w) => {
    const id = namedIds === null ? undefined : registered?.idOf(w);
    return id === undefined ? !named.has(w) : !(namedIds as Set<string>).has(id);
  });
  return unasked.length > 0 ? { unasked } : null;
}

function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((a) => typeof a === "string");
}
