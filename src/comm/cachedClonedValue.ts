/**
 * A {@link ClonedValue} sent many times over, whose structured-clone bytes are
 * made at its first encoding and kept for the next: an event the scheduler
 * keeps, sent in every `get-events` answer that covers its topic and to each
 * subscriber. Encoded anew each time, a client polling a topic of 100,000 events
 * cost the scheduler a second of `v8.serialize` a poll, every other client and
 * worker waiting meanwhile. The receiver gets the same bytes either way.
 *
 * The value is not to change once sent (the bytes would not follow): what
 * holds one keeps it as received. The bytes are kept as long as the value,
 * about doubling what it holds once it was sent.
 */

import { clonedBytes } from "./clonedBytes.ts";
import { ClonedValue } from "./clonedValue.ts";

export class CachedClonedValue extends ClonedValue {
  private encoded: { readonly bytes: Uint8Array; readonly kind: number | null } | null = null;

  /** `v` kept so, if it is a cloned value; anything else as it is (sent as message fields). */
  static of(v: unknown): unknown {
    return v instanceof ClonedValue && !(v instanceof CachedClonedValue)
      ? new CachedClonedValue(v.value)
      : v;
  }

  /** The value's bytes and raw kind (see `clonedBytes`), made once. */
  clonedBytes(): { readonly bytes: Uint8Array; readonly kind: number | null } {
    this.encoded ??= clonedBytes(this.value);
    return this.encoded;
  }
}
