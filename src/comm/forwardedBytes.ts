/**
 * Out-of-band buffers that a forwarding TCP comm (the scheduler's) received
 * and passes on without reading: a large task argument is the scheduler's to
 * hold and send on to a worker, never to look at (as Dask's scheduler never
 * deserializes task data). Joining its bytes into one buffer would be a copy of
 * the whole argument for nothing; these keep the views of the socket chunks it
 * arrived in, and are written back to the wire as the same extension, so that
 * the worker receives the bytes it would have received from the client.
 *
 * They exist only between a forwarding comm's decoder and a TCP encoder: only
 * a TCP listener made with `forwardOutOfBandBuffers` makes them, and its comms
 * reach TCP peers only.
 */

/** The total length of `pieces`. */
export function piecesLength(pieces: readonly Uint8Array[]): number {
  let n = 0;
  for (const p of pieces) n += p.byteLength;
  return n;
}

/** The bytes of one out-of-band buffer, as the pieces it arrived in, and its kind byte. */
export abstract class ForwardedBuffer {
  readonly #pieces: readonly Uint8Array[];
  readonly #kind: number;
  readonly #byteLength: number;

  constructor(pieces: readonly Uint8Array[], kind: number) {
    this.#pieces = pieces;
    this.#kind = kind;
    this.#byteLength = piecesLength(pieces);
  }

  /** Views of the received chunks, in order (not copies). */
  get pieces(): readonly Uint8Array[] {
    return this.#pieces;
  }

  /** The kind byte of the raw value (see `clonedBytes.ts`). */
  get kind(): number {
    return this.#kind;
  }

  /** The raw value's length in bytes: the pieces' lengths added up. */
  get byteLength(): number {
    return this.#byteLength;
  }

  /** For logs: the size, not megabytes of numbers. */
  toJSON(): { forwardedBytes: number } {
    return { forwardedBytes: this.#byteLength };
  }
}

/** A large typed array, `Buffer` or `ArrayBuffer` (extension 0x62), forwarded unread. */
export class ForwardedBytes extends ForwardedBuffer {}

/** A `ClonedValue` of a typed array, `Buffer` or `ArrayBuffer` (extension 0x76), forwarded unread. */
export class ForwardedClonedValue extends ForwardedBuffer {}

/** True for what a forwarding decoder made of an out-of-band buffer. */
export function isForwarded(v: object): v is ForwardedBytes | ForwardedClonedValue {
  return v instanceof ForwardedBuffer;
}
