import { describe, expect, it } from "vitest";
import { SerializationError } from "./errors.ts";
import { messageLength, messageSegments, splitMessage } from "./messageLayout.ts";

const bytes = (...xs: number[]) => Uint8Array.from(xs);

describe("message layout", () => {
  it("an ordinary message is four zero bytes and its payload", () => {
    const segments = messageSegments({ payload: bytes(0x90), buffers: [] });
    expect([...Buffer.concat(segments)]).toEqual([0, 0, 0, 0, 0x90]);
    expect(messageLength(segments)).toBe(5);
  });

  it("round-trips buffers of any sizes, each starting at a multiple of 8", () => {
    for (const sizes of [[1], [0, 7, 8, 9], [3, 3, 3], [16, 1]]) {
      const buffers = sizes.map((n, i) => new Uint8Array(n).fill(i + 1));
      const payload = bytes(0x81, 0xa1, 0x61, 0x01);
      const whole = Buffer.concat(messageSegments({ payload, buffers }));
      const split = splitMessage(whole);
      expect(split.buffers.map((b) => [...b])).toEqual(buffers.map((b) => [...b]));
      expect([...split.payload]).toEqual([...payload]);
      for (const b of split.buffers) expect(b.byteOffset % 8).toBe(0);
    }
  });

  it("refuses bytes that are not a message, with a SerializationError", () => {
    const cases: [Uint8Array, RegExp][] = [
      [bytes(0, 0, 1), /too short/],
      [bytes(0, 0, 0, 9, 0, 0, 0, 1), /announces 9 out-of-band buffers/],
      [bytes(0, 0, 0, 1, 0, 0, 0, 64, 1, 2, 3), /buffer 0 runs past the end/],
    ];
    for (const [b, why] of cases) {
      expect(() => splitMessage(b)).toThrow(SerializationError);
      expect(() => splitMessage(b)).toThrow(why);
    }
  });
});
