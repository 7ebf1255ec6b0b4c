/**
 * Which copy of the wire codec is encoding or decoding a message now, for every
 * copy of weft in the thread.
 *
 * msgpackr's extensions are process-wide (one registry per thread), and each
 * copy of weft loaded in a thread registers its own for the same extension
 * types: the checkout's `weft` command, run from the sources, beside a task
 * module importing the built package; two installed versions sharing one
 * msgpackr. msgpackr decodes with the extension registered last, and encodes an
 * instance with the first registered for its class. Each copy's extensions read
 * and write the out-of-band buffers of the message its own copy is handling, so
 * another copy's found none: a task argument of 64 KiB or more reached the
 * checkout's `weft worker --executor inline` as null, without an error. Every
 * registered extension therefore hands its work to the copy whose
 * `encodeMessage` or `decodeMessage` runs (encoding and decoding are synchronous).
 */

/** What the extensions of the copy at work do with a message's out-of-band buffers. */
export interface ActiveCodec {
  /** Add `b` to the out-of-band buffers of the message being encoded; its reference. */
  outOfBandRef(b: Uint8Array | readonly Uint8Array[], kind: number | null): Buffer;
  /** Read extension 0x62 (a large byte array) of the message being decoded. */
  unpackBytes(ref: Buffer): unknown;
  /** Read extension 0x76 (a cloned value) of the message being decoded. */
  unpackClonedValue(ref: Buffer): unknown;
}

/** Versioned: a later codec of another shape must not be handed this one's. */
const ACTIVE_CODEC = Symbol.for("weft.wireCodec.active.v1");

type Holder = { [ACTIVE_CODEC]?: ActiveCodec };

/** The copy at work, or `own` when none is (a copy's extensions outside any message). */
export function activeCodec(own: ActiveCodec): ActiveCodec {
  return (globalThis as Holder)[ACTIVE_CODEC] ?? own;
}

/** Run `work` (one message's encoding or decoding) with `codec` as the copy at work. */
export function withActiveCodec<T>(codec: ActiveCodec, work: () => T): T {
  const holder = globalThis as Holder;
  const before = holder[ACTIVE_CODEC];
  holder[ACTIVE_CODEC] = codec;
  try {
    return work();
  } finally {
    holder[ACTIVE_CODEC] = before;
  }
}
