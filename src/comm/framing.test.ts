import { describe, expect, it } from "vitest";
import { FrameTooLargeError } from "./errors.ts";
import { FrameReader, frameHeader } from "./framing.ts";

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
  });
});
