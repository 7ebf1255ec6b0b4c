/**
 * The bytes of one TCP message, before framing: the number of out-of-band
 * buffers and their lengths, the buffers, then the msgpack payload.
 *
 *     u32 n | u32 length × n | pad to 8 | buffer 1 | pad to 8 | buffer 2 | … | pad to 8 | payload
 *
 * (big-endian; no padding at all when n is 0, so an ordinary message is four
 * zero bytes and its msgpack payload). The buffers start at multiples of 8 bytes
 * of the message, so that a typed array in a cloned value can be read where it
 * lies once the message is in one buffer.
 *
 * A buffer may be given, and received, in several pieces (a forwarding comm's,
 * see `forwardedBytes.ts`): its length is theirs together, its place the same.
 */

import { SerializationError } from "./errors.ts";
import { piecesLength } from "./forwardedBytes.ts";
import type { EncodedMessage, OutOfBandBuffer } from "./wireCodec.ts";

const ZEROS = new Uint8Array(8);

const pad = (n: number): number => (8 - (n % 8)) % 8;

/** The length of a buffer given whole or in pieces. */
function bufferLength(b: OutOfBandBuffer): number {
  return Array.isArray(b) ? piecesLength(b) : (b as Uint8Array).length;
}

/** The pieces of `m`'s bytes, in order (the buffers and the payload are not copied). */
export function messageSegments(m: EncodedMessage): Uint8Array[] {
  const n = m.buffers.length;
  const prelude = Buffer.allocUnsafe(4 + 4 * n);
  prelude.writeUInt32BE(n, 0);
  if (n === 0) return [prelude, m.payload];
  const lengths = m.buffers.map(bufferLength);
  for (let i = 0; i < n; i++) prelude.writeUInt32BE(lengths[i], 4 + 4 * i);
  const out: Uint8Array[] = [prelude];
  let at = prelude.length;
  for (let i = 0; i < n; i++) {
    const b = m.buffers[i];
    if (pad(at) > 0) out.push(ZEROS.subarray(0, pad(at)));
    at += pad(at);
    if (Array.isArray(b)) {
      for (const p of b as readonly Uint8Array[]) if (p.length > 0) out.push(p);
    } else {
      out.push(b as Uint8Array);
    }
    at += lengths[i];
  }
  if (pad(at) > 0) out.push(ZEROS.subarray(0, pad(at)));
  out.push(m.payload);
  return out;
}

/** The total length of {@link messageSegments}. */
export function messageLength(segments: readonly Uint8Array[]): number {
  let n = 0;
  for (const s of segments) n += s.length;
  return n;
}

const malformed = (why: string) => new SerializationError(`malformed frame: ${why}`);

/** The payload and buffers of a message's bytes (views, not copies). Throws a `SerializationError`. */
export function splitMessage(bytes: Uint8Array): EncodedMessage & {
  readonly buffers: readonly Uint8Array[];
} {
  if (bytes.length < 4) throw malformed(`${bytes.length} bytes, too short for a message`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0);
  if (n === 0) return { payload: bytes.subarray(4), buffers: [] };
  if (4 + 4 * n > bytes.length) throw malformed(`announces ${n} out-of-band buffers`);
  const buffers: Uint8Array[] = [];
  let at = 4 + 4 * n;
  for (let i = 0; i < n; i++) {
    const length = view.getUint32(4 + 4 * i);
    at += pad(at);
    if (at + length > bytes.length) throw malformed(`out-of-band buffer ${i} runs past the end`);
    buffers.push(bytes.subarray(at, at + length));
    at += length;
  }
  at += pad(at);
  if (at > bytes.length) throw malformed("no payload after the out-of-band buffers");
  return { payload: bytes.subarray(at), buffers };
}

/** Reads consecutive byte ranges of a sequence of pieces, as views of them. */
class PieceReader {
  private piece = 0;
  private offset = 0; // into pieces[piece]
  /** Bytes not read yet. */
  left: number;

  constructor(private readonly pieces: readonly Uint8Array[]) {
    this.left = piecesLength(pieces);
  }

  /** Views of the next `n` bytes (at most `left`). */
  views(n: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    this.left -= n;
    while (n > 0) {
      const p = this.pieces[this.piece];
      const take = Math.min(n, p.length - this.offset);
      out.push(take === p.length ? p : p.subarray(this.offset, this.offset + take));
      n -= take;
      this.offset += take;
      if (this.offset === p.length) {
        this.piece++;
        this.offset = 0;
      }
    }
    return out;
  }

  /** The next `n` bytes in one piece: a view when they lie in one, else a copy. */
  joined(n: number): Uint8Array {
    const v = this.views(n);
    return v.length === 1 ? v[0] : Buffer.concat(v, n);
  }
}

/**
 * {@link splitMessage} of a message's bytes in several pieces (as its frames
 * arrived): each out-of-band buffer is views of the pieces that hold it, not
 * joined (one piece when it lies in one); the prelude and the payload, which
 * are small, are joined (copied) when they span pieces.
 */
export function splitMessagePieces(pieces: readonly Uint8Array[]): EncodedMessage {
  if (pieces.length === 1) return splitMessage(pieces[0]);
  const r = new PieceReader(pieces);
  const total = r.left;
  if (total < 4) throw malformed(`${total} bytes, too short for a message`);
  const count = r.joined(4);
  const n = new DataView(count.buffer, count.byteOffset, 4).getUint32(0);
  if (n === 0) return { payload: r.joined(r.left), buffers: [] };
  if (4 + 4 * n > total) throw malformed(`announces ${n} out-of-band buffers`);
  const lengths = r.joined(4 * n);
  const view = new DataView(lengths.buffer, lengths.byteOffset, 4 * n);
  const buffers: OutOfBandBuffer[] = [];
  let at = 4 + 4 * n;
  for (let i = 0; i < n; i++) {
    const length = view.getUint32(4 * i);
    const skip = pad(at);
    if (at + skip + length > total) throw malformed(`out-of-band buffer ${i} runs past the end`);
    r.views(skip);
    const b = r.views(length);
    buffers.push(b.length === 1 ? b[0] : b);
    at += skip + length;
  }
  const skip = pad(at);
  if (at + skip > total) throw malformed("no payload after the out-of-band buffers");
  r.views(skip);
  return { payload: r.joined(r.left), buffers };
}
