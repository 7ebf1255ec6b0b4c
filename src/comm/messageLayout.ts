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
 */

import { SerializationError } from "./errors.ts";
import type { EncodedMessage } from "./wireCodec.ts";

const ZEROS = new Uint8Array(8);

const pad = (n: number): number => (8 - (n % 8)) % 8;

/** The pieces of `m`'s bytes, in order (the buffers and the payload are not copied). */
export function messageSegments(m: EncodedMessage): Uint8Array[] {
  const n = m.buffers.length;
  const prelude = Buffer.allocUnsafe(4 + 4 * n);
  prelude.writeUInt32BE(n, 0);
  for (let i = 0; i < n; i++) prelude.writeUInt32BE(m.buffers[i].length, 4 + 4 * i);
  if (n === 0) return [prelude, m.payload];
  const out: Uint8Array[] = [prelude];
  let at = prelude.length;
  for (const b of m.buffers) {
    if (pad(at) > 0) out.push(ZEROS.subarray(0, pad(at)));
    at += pad(at);
    out.push(b);
    at += b.length;
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

/** The payload and buffers of a message's bytes (views, not copies). Throws a `SerializationError`. */
export function splitMessage(bytes: Uint8Array): EncodedMessage {
  const malformed = (why: string) => new SerializationError(`malformed frame: ${why}`);
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
