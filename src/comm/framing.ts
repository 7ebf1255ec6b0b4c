/**
 * Length-prefixed framing: every frame is a 4-byte big-endian header followed
 * by its payload. The header's low 31 bits are the payload's length; its high
 * bit says that more frames of the same message follow. A message larger than
 * a frame is cut into several (as Dask shards large frames), so that the
 * frame limit bounds what one header can make a reader wait for, while the
 * message limit bounds what a whole message may be.
 */

import { FrameTooLargeError, MessageTooLargeError } from "./errors.ts";

/** Size of a frame header. */
export const FRAME_HEADER_BYTES = 4;

/** The largest length a header can express. */
export const MAX_FRAME_LENGTH = 0x7fff_ffff;

/** The header bit saying that the message goes on in the next frame. */
const MORE_FRAMES = 0x8000_0000;

/** The 4-byte header announcing a payload of `length` bytes; `more`: the message goes on. */
export function frameHeader(length: number, more = false): Buffer {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  header.writeUInt32BE(more ? (length | MORE_FRAMES) >>> 0 : length, 0);
  return header;
}

/**
 * The frames of one message given as consecutive pieces: `[header, bytes…,
 * header, bytes…]`, frames of at most `maxFrameBytes` (views of the pieces,
 * not copies).
 */
export function framesOf(
  pieces: Uint8Array | readonly Uint8Array[],
  maxFrameBytes: number,
): Uint8Array[] {
  const parts = pieces instanceof Uint8Array ? [pieces] : pieces;
  let total = 0;
  for (const p of parts) total += p.length;
  if (total <= maxFrameBytes) return [frameHeader(total), ...parts];
  const out: Uint8Array[] = [];
  let part = 0;
  let offset = 0; // into parts[part]
  for (let left = total; left > 0; ) {
    const size = Math.min(maxFrameBytes, left);
    left -= size;
    out.push(frameHeader(size, left > 0));
    for (let need = size; need > 0; ) {
      const p = parts[part];
      const take = Math.min(need, p.length - offset);
      out.push(p.subarray(offset, offset + take));
      need -= take;
      offset += take;
      if (offset === p.length) {
        part++;
        offset = 0;
      }
    }
  }
  return out;
}

/**
 * A frame that is not a message's last and is shorter than this is copied
 * instead of kept as views of the chunks it arrived in. weft's sender makes
 * every such frame exactly `maxFrameBytes` long (64 MiB by default), but a
 * process may be configured with frames of a few bytes, and a hostile peer may
 * send them: kept as views, a frame of 1 byte would cost some 100 bytes of heap
 * for the 5 it took on the wire. Copied, a message costs its bytes (plus
 * views of the larger frames, at most a few per 4 KiB). Not refused, because
 * a receiver cannot tell a hostile peer from one with a smaller `maxFrameBytes`.
 */
export const SMALL_FRAME_BYTES = 4096;

/** Size of the buffers that the copies of small frames are gathered into. */
const GATHER_BYTES = 64 * 1024;

/**
 * Cuts a byte stream into messages. Feed it chunks as they arrive; it returns
 * the complete messages' payloads, joined into one buffer ({@link push}:
 * copying only when a message spans several chunks) or as the views of the
 * chunks it arrived in ({@link pushPieces}: copying only its frames shorter
 * than {@link SMALL_FRAME_BYTES} other than the last).
 */
export class FrameReader {
  /** Chunks received and not taken yet; the first one from `head` on. */
  private chunks: Buffer[] = [];
  private head = 0;
  private buffered = 0;
  private expected = -1;
  private more = false;
  /** The pieces read so far of the pending message. */
  private parts: Buffer[] = [];
  private partsBytes = 0;
  /**
   * Space for copies of small frames: the first `gathered` bytes are copies
   * that belong after `parts`. What a message leaves unused is the next
   * message's, so that a run of messages of small frames shares one buffer.
   */
  private spare: Buffer = Buffer.alloc(0);
  private gathered = 0;

  constructor(
    private readonly maxFrameBytes: number,
    private readonly maxMessageBytes: number = Number.POSITIVE_INFINITY,
  ) {}

  /** Bytes received that do not form a complete message yet. */
  get pendingBytes(): number {
    return this.buffered + this.partsBytes;
  }

  /**
   * The size of the pending message as far as its headers tell (the frames
   * read plus the one announced), or -1 if no header of it was read yet.
   */
  get expectedBytes(): number {
    return this.expected < 0 ? -1 : this.partsBytes + this.expected;
  }

  /**
   * Add a chunk; returns the message payloads completed by it, each in one
   * buffer, also appended to `out`. Throws as {@link pushPieces}.
   */
  push(chunk: Buffer, out: Buffer[] = []): Buffer[] {
    const completed: Buffer[][] = [];
    try {
      this.pushPieces(chunk, completed);
    } finally {
      for (const pieces of completed) {
        if (pieces.length === 1) out.push(pieces[0]);
        else out.push(Buffer.concat(pieces));
      }
    }
    return out;
  }

  /**
   * Add a chunk; returns the message payloads completed by it, each as views
   * of the chunks that hold it, in order (none for an empty message), except
   * for copies of its small frames (see {@link SMALL_FRAME_BYTES}). Throws
   * `FrameTooLargeError` for a header above the frame limit and
   * `MessageTooLargeError` for a message growing past the message limit; the
   * messages the chunk completed before are then in `out` (they arrived whole).
   */
  pushPieces(chunk: Buffer, out: Buffer[][] = []): Buffer[][] {
    if (chunk.length === 0) return out;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.expected < 0) {
        if (this.buffered < FRAME_HEADER_BYTES) break;
        const word = this.takeHeader();
        const length = word & MAX_FRAME_LENGTH;
        if (length > this.maxFrameBytes) {
          throw new FrameTooLargeError(
            length,
            this.maxFrameBytes,
            frameHeader(length, word >= MORE_FRAMES),
          );
        }
        if (this.partsBytes + length > this.maxMessageBytes) {
          throw new MessageTooLargeError(this.partsBytes + length, this.maxMessageBytes, "receive");
        }
        this.expected = length;
        this.more = word >= MORE_FRAMES;
      }
      if (this.buffered < this.expected) break;
      const length = this.expected;
      this.expected = -1;
      if (this.more && length < SMALL_FRAME_BYTES) {
        this.gather(length);
      } else {
        this.flushGathered();
        this.takeViews(length, this.parts);
      }
      this.partsBytes += length;
      if (!this.more) {
        out.push(this.parts);
        this.parts = [];
        this.partsBytes = 0;
      }
    }
    return out;
  }

  /** Remove the first `n` buffered bytes, appending views of them to `into`. */
  private takeViews(n: number, into: Buffer[]): void {
    let left = n;
    while (left > 0) {
      const c = this.chunks[0];
      const available = c.length - this.head;
      if (available <= left) {
        into.push(this.head === 0 ? c : c.subarray(this.head));
        this.chunks.shift();
        this.head = 0;
        left -= available;
      } else {
        into.push(c.subarray(this.head, this.head + left));
        this.head += left;
        left = 0;
      }
    }
    this.buffered -= n;
  }

  /** Remove the first `n` buffered bytes, copying them into `target` at `at`. */
  private takeCopy(n: number, target: Buffer, at: number): void {
    let left = n;
    let to = at;
    while (left > 0) {
      const c = this.chunks[0];
      const take = Math.min(left, c.length - this.head);
      c.copy(target, to, this.head, this.head + take);
      to += take;
      left -= take;
      this.head += take;
      if (this.head === c.length) {
        this.chunks.shift();
        this.head = 0;
      }
    }
    this.buffered -= n;
  }

  /** Remove the (at least 4 buffered) bytes of a header and return its value. */
  private takeHeader(): number {
    const first = this.chunks[0];
    if (first.length - this.head >= FRAME_HEADER_BYTES) {
      const word = first.readUInt32BE(this.head);
      this.head += FRAME_HEADER_BYTES;
      if (this.head === first.length) {
        this.chunks.shift();
        this.head = 0;
      }
      this.buffered -= FRAME_HEADER_BYTES;
      return word;
    }
    const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
    this.takeCopy(FRAME_HEADER_BYTES, header, 0);
    return header.readUInt32BE(0);
  }

  /** Copy the next `n` buffered bytes after the gathered ones. */
  private gather(n: number): void {
    let left = n;
    while (left > 0) {
      if (this.gathered === this.spare.length) {
        this.flushGathered();
        this.spare = Buffer.allocUnsafe(GATHER_BYTES);
      }
      const take = Math.min(left, this.spare.length - this.gathered);
      this.takeCopy(take, this.spare, this.gathered);
      this.gathered += take;
      left -= take;
    }
  }

  /** Append the gathered copies to `parts`, leaving the rest of their buffer spare. */
  private flushGathered(): void {
    if (this.gathered === 0) return;
    this.parts.push(this.spare.subarray(0, this.gathered));
    this.spare = this.spare.subarray(this.gathered);
    this.gathered = 0;
  }
}
