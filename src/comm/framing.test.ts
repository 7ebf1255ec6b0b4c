import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FrameTooLargeError, MessageTooLargeError } from "./errors.ts";
import { FrameReader, frameHeader, framesOf, SMALL_FRAME_BYTES } from "./framing.ts";

function frames(...payloads: Buffer[]): Buffer {
  return Buffer.concat(payloads.flatMap((p) => [frameHeader(p.length), p]));
}

describe("FrameReader", () => {
  it("cuts frames at any chunking", () => {
    const payloads = [Buffer.from("hello"), Buffer.alloc(0), Buffer.from("x".repeat(300))];
    const bytes = frames(...payloads);
    for (const size of [1, 2, 3, 5, 7, 64, bytes.length]) {
      const r = new FrameReader(1000);
      const out: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) out.push(...r.push(bytes.subarray(i, i + size)));
      expect(out.map((b) => b.toString())).toEqual(payloads.map((b) => b.toString()));
      expect(r.pendingBytes).toBe(0);
    }
  });

  it("reports a partial frame", () => {
    const r = new FrameReader(1000);
    r.push(Buffer.concat([frameHeader(10), Buffer.alloc(4)]));
    expect(r.expectedBytes).toBe(10);
    expect(r.pendingBytes).toBe(4);
  });

  it("refuses a header above the limit", () => {
    const r = new FrameReader(8);
    expect(() => r.push(frameHeader(9))).toThrow(FrameTooLargeError);
    expect(() => new FrameReader(8).push(frameHeader(9))).not.toThrow(/reads as text/);
  });

  it("says so when the peer speaks another protocol (its first bytes are text)", () => {
    const r = new FrameReader(64 * 1024 * 1024);
    expect(() => r.push(Buffer.from("HTTP/1.1 400 Bad Request\r\n"))).toThrow(
      /larger than maxFrameBytes \(67108864\); it reads as text \("HTTP…"\): is the peer a weft scheduler or worker\?/,
    );
  });

  it("says so when the peer starts a TLS handshake (a tls:// peer at a tcp:// address)", () => {
    // A TLS record header: handshake (22), version 3.1, then the record's length.
    const hello = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]);
    expect(() => new FrameReader(64 * 1024 * 1024).push(hello)).toThrow(
      /larger than maxFrameBytes \(67108864\); it reads as the start of a TLS handshake: is the peer given a tls:\/\/ address for this tcp:\/\/ one\?$/,
    );
  });

  it("reassembles a message sent in several frames, at any chunking", () => {
    const big = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
    const bytes = Buffer.concat([
      ...framesOf(big, 64),
      ...framesOf(Buffer.from("after"), 64),
      ...framesOf(big.subarray(0, 128), 64), // an exact multiple of the frame size
    ]);
    expect(framesOf(big, 64)).toHaveLength(2 * Math.ceil(1000 / 64));
    for (const size of [1, 3, 63, 64, 65, 500, bytes.length]) {
      const r = new FrameReader(64);
      const out: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) out.push(...r.push(bytes.subarray(i, i + size)));
      expect(out).toHaveLength(3);
      expect(out[0].equals(big), `chunks of ${size}`).toBe(true);
      expect(out[1].toString()).toBe("after");
      expect(out[2].equals(big.subarray(0, 128))).toBe(true);
      expect(r.pendingBytes).toBe(0);
      expect(r.expectedBytes).toBe(-1);
    }
  });

  it("gives a message as views of the chunks it arrived in, copying none of it", () => {
    const big = Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 251));
    const bytes = Buffer.concat([
      ...framesOf(big, SMALL_FRAME_BYTES),
      ...framesOf(Buffer.from("after"), SMALL_FRAME_BYTES),
    ]);
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 997) {
      chunks.push(Buffer.from(bytes.subarray(i, i + 997))); // each chunk its own memory
    }
    const r = new FrameReader(SMALL_FRAME_BYTES);
    const out = chunks.flatMap((c) => r.pushPieces(c));
    expect(out).toHaveLength(2);
    expect(out[0].length).toBeGreaterThan(1);
    expect(Buffer.concat(out[0]).equals(big)).toBe(true);
    expect(Buffer.concat(out[1]).toString()).toBe("after");
    const received = new Set(chunks.map((c) => c.buffer));
    for (const piece of out.flat()) expect(received.has(piece.buffer)).toBe(true);
    // An empty message is no pieces.
    expect(new FrameReader(10).pushPieces(frameHeader(0))).toEqual([[]]);
  });

  it("copies a message's small frames together instead of keeping a view of each", () => {
    // A hostile peer (or a process configured with tiny frames): 200,000 frames
    // of 1 byte, each a view, held some 100 bytes of heap for every 5 received.
    const n = 200_000;
    const frame = Buffer.from([0x80, 0, 0, 1, 0]); // 1 byte, more frames follow
    const bytes = Buffer.alloc(n * frame.length);
    for (let i = 0; i < n; i++) {
      frame[4] = i % 256;
      frame.copy(bytes, i * frame.length);
    }
    for (const reader of ["push", "pushPieces"] as const) {
      const r = new FrameReader(64);
      for (let at = 0; at < bytes.length; at += 65_536) {
        expect(r[reader](bytes.subarray(at, at + 65_536))).toEqual([]);
      }
      expect(r.pendingBytes).toBe(n);
      const [message] = r.pushPieces(Buffer.concat([frameHeader(2), Buffer.from("!!")]));
      expect(message.length, reader).toBeLessThanOrEqual(Math.ceil(n / 65_536) + 1);
      const joined = Buffer.concat(message);
      expect(joined.length).toBe(n + 2);
      expect(joined.subarray(0, n).every((b, i) => b === i % 256)).toBe(true);
      expect(joined.subarray(n).toString()).toBe("!!");
    }
  });

  it("keeps the order of small and large frames mixed in any way, and the large ones as views", () => {
    // Not what weft's sender makes (its frames but the last are all the same
    // size), but what a peer may send.
    const sizes = [1, SMALL_FRAME_BYTES, 3, 0, SMALL_FRAME_BYTES - 1, 70_000, 2, 70_000, 9];
    let next = 0;
    const payloads = sizes.map((size) =>
      Buffer.from(Array.from({ length: size }, () => next++ % 253)),
    );
    const bytes = Buffer.concat(
      payloads.flatMap((p, i) => [frameHeader(p.length, i < payloads.length - 1), p]),
    );
    for (const size of [7, 4093, 65_536, bytes.length]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size)
        chunks.push(Buffer.from(bytes.subarray(i, i + size)));
      const r = new FrameReader(100_000);
      const out = chunks.flatMap((c) => r.pushPieces(c));
      expect(out).toHaveLength(1);
      expect(Buffer.concat(out[0]).equals(Buffer.concat(payloads)), `chunks of ${size}`).toBe(true);
      const received = new Set(chunks.map((c) => c.buffer));
      const viewed = out[0].filter((p) => received.has(p.buffer));
      const viewedBytes = viewed.reduce((sum, p) => sum + p.length, 0);
      // The frames of at least SMALL_FRAME_BYTES, and the last.
      expect(viewedBytes).toBe(SMALL_FRAME_BYTES + 70_000 + 70_000 + 9);
      expect(r.pendingBytes).toBe(0);
    }
  });

  it("counts the frames already read of a message as pending", () => {
    const r = new FrameReader(10);
    r.push(
      Buffer.concat([frameHeader(10, true), Buffer.alloc(10), frameHeader(10), Buffer.alloc(3)]),
    );
    expect(r.pendingBytes).toBe(13);
    expect(r.expectedBytes).toBe(20);
  });

  it("refuses a message growing past the message limit", () => {
    const r = new FrameReader(10, 25);
    r.push(Buffer.concat([frameHeader(10, true), Buffer.alloc(10), frameHeader(10, true)]));
    expect(() => r.push(Buffer.concat([Buffer.alloc(10), frameHeader(10)]))).toThrow(
      MessageTooLargeError,
    );
    const whole = new FrameReader(100, 25);
    expect(() => whole.push(frameHeader(26))).toThrow(
      /at least 26 B \(26 bytes\): larger than maxMessageBytes \(25 B\)$/,
    );
  });

  it("returns every message as sent, whatever the frame size and the chunking", () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 8 }),
        fc.integer({ min: 1, max: 70 }),
        fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 10 }),
        (messages, maxFrameBytes, cuts) => {
          // Each message given as three pieces (some maybe empty).
          const pieces = (m: Uint8Array) => {
            const a = Math.min(cuts[0], m.length);
            const b = Math.max(a, Math.min(a + cuts[cuts.length - 1], m.length));
            return [m.subarray(0, a), m.subarray(a, b), m.subarray(b)];
          };
          const bytes = Buffer.concat(messages.flatMap((m) => framesOf(pieces(m), maxFrameBytes)));
          const r = new FrameReader(maxFrameBytes);
          const inPieces = new FrameReader(maxFrameBytes);
          const out: Buffer[] = [];
          const outPieces: Buffer[][] = [];
          for (let at = 0, i = 0; at < bytes.length; i++) {
            const end = at + cuts[i % cuts.length];
            out.push(...r.push(bytes.subarray(at, end)));
            outPieces.push(...inPieces.pushPieces(bytes.subarray(at, end)));
            at = end;
          }
          expect(out.map((b) => [...b])).toEqual(messages.map((m) => [...m]));
          expect(outPieces.map((p) => [...Buffer.concat(p)])).toEqual(messages.map((m) => [...m]));
          expect(r.pendingBytes).toBe(0);
          expect(inPieces.pendingBytes).toBe(0);
        },
      ),
    );
  });
});
