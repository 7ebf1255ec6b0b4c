import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FrameTooLargeError, MessageTooLargeError } from "./errors.ts";
import { FrameReader, frameHeader, framesOf } from "./framing.ts";

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
    const big = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
    const bytes = Buffer.concat([...framesOf(big, 300), ...framesOf(Buffer.from("after"), 300)]);
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 97) {
      chunks.push(Buffer.from(bytes.subarray(i, i + 97))); // each chunk its own memory
    }
    const r = new FrameReader(300);
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
    expect(() => whole.push(frameHeader(26))).toThrow(/at least 26 bytes.*maxMessageBytes \(25\)/);
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
