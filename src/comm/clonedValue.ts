/**
 * A value that crosses the wire with the structured-clone algorithm
 * (`v8.serialize`) rather than as message fields: what tasks produce and
 * consume (the `get_data` answers). Cycles, shared references, sparse arrays,
 * `Map`/`Set`/`Date`/`RegExp`/`Error`, typed arrays, `BigInt`, `-0` and keys
 * such as `__proto__` come across as they were, the same as between a
 * worker's threads. In process it is passed by reference like any message.
 */
export class ClonedValue {
  constructor(
    /** The value, as given (to send) or as structured clone decoded it (received). */
    readonly value: unknown,
  ) {}

  /** `v` unwrapped if it is a `ClonedValue`, else `v` itself (a peer may send plain values). */
  static unwrap(v: unknown): unknown {
    return v instanceof ClonedValue ? v.value : v;
  }
}
