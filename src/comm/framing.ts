/**
 * Length-prefixed framing: every frame is a 4-byte big-endian unsigned length
 * followed by that many bytes of payload.
 */

import { FrameTooLargeError } from "./errors.ts";

/** Size of a frame header. */
export const FRAME_HEADER_BYTES = 4;

/** The largest length a header can express. */
export const MAX_FRAME_LENGTH = 0xffff_ffff;

/** The 4-byte header announcing a payload of `length` bytes. */
export function frameHeader(length: number): Buffer {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  header.writeUInt32BE(length, 0);
  return header;
}

/**
 * Cuts a byte stream into frames. Feed it chunks as they arrive; it returns the
 * complete payloads, copying only when a frame spans several chunks.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private expected = -1;

  constructor(private readonly maxFrameBytes: number) {}

  /** Bytes received that do not form a complete frame yet. */
  get pendingBytes(): number {
    return this.buffered;
  }

  /** The payload size announced by the pending header, or -1 if no header was read yet. */
  get expectedBytes(): number {
    return this.expected;
  }

  /** Add a chunk; returns the payloads completed by it. Throws `FrameTooLargeError`. */
  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    if (chunk.length === 0) return out;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.expected < 0) {
        if (this.buffered < FRAME_HEADER_BYTES) break;
        const header = this.take(FRAME_HEADER_BYTES);
        const length = header.readUInt32BE(0);
        if (length > this.maxFrameBytes) {
          throw new FrameTooLargeError(length, this.maxFrameBytes, "receive");
        }
        this.expected = length;
      }
      if (this.buffered < this.expected) break;
      out.push(this.take(this.expected));
      this.expected = -1;
    }
    return out;
  }

  /** Remove and return the first `n` buffered bytes. */
  private take(n: number): Buffer {
    const first = this.chunks[0];
    if (n === 0) return Buffer.alloc(0);
    if (first.length >= n) {
      const out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      this.buffered -= n;
      return out;
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    let i = 0;
    while (filled < n) {
      const c = this.chunks[i];
      const want = n - filled;
      if (c.length <= want) {
        c.copy(out, filled);
        filled += c.length;
        i++;
      } else {
        c.copy(out, filled, 0, want);
        this.chunks[i] = c.subarray(want);
        filled += want;
      }
    }
    this.chunks = this.chunks.slice(i);
    this.buffered -= n;
    return out;
  }
}
