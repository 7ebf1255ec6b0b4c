import { describe, expect, it } from "vitest";
import { SerializationError } from "./errors.ts";
import {
  messageLength,
  messageSegments,
  splitMessage,
  splitMessagePieces,
} from "./messageLayout.ts";

const bytes = (...xs: number[]) => Uint8Array.from(xs);

/** `whole` cut every `size` bytes, each piece in its own memory (as socket chunks). */
function cut(whole: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < whole.length; i += size) out.push(whole.slice(i, i + size));
  return out;
}

/** A buffer given whole or in pieces, joined. */
const joined = (b: Uint8Array | readonly Uint8Array[]): number[] =>
  Array.isArray(b) ? [...Buffer.concat(b as Uint8Array[])] : [...(b as Uint8Array)];

describe("message layout", () => {
  it("an ordinary message is four zero bytes and its payload", () => {
    const segments = messageSegments({ payload: bytes(0x90), buffers: [] });
    expect([...Buffer.concat(segments)]).toEqual([0, 0, 0, 0, 0x90]);
    expect(messageLength(segments)).toBe(5);
  });

  it("pads to the next multiple of 8 only: an aligned buffer or payload follows with no padding", () => {
    // Pinned byte for byte: this is the wire format another process (another version) reads.
    const one = Buffer.concat(
      messageSegments({ payload: bytes(0x90), buffers: [bytes(1, 2, 3, 4, 5, 6, 7, 8)] }),
    );
    expect([...one]).toEqual([0, 0, 0, 1, 0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0x90]);
    const two = Buffer.concat(
      messageSegments({ payload: bytes(0x90), buffers: [bytes(1, 2, 3), bytes(4)] }),
    );
    expect([...two]).toEqual([
      ...[0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0],
      ...[1, 2, 3, 0, 0, 0, 0, 0],
      ...[4, 0, 0, 0, 0, 0, 0, 0],
      0x90,
    ]);
    for (const whole of [one, two]) {
      expect([...splitMessage(whole).payload]).toEqual([0x90]);
      expect([...splitMessagePieces(cut(whole, 3)).payload]).toEqual([0x90]);
    }
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

  it("splits a message in pieces into buffers that are views of the pieces, whatever the cuts", () => {
    const sizes = [0, 7, 100, 9, 64];
    const buffers = sizes.map((n, i) => Uint8Array.from({ length: n }, (_, j) => i + j));
    const payload = bytes(0x81, 0xa1, 0x61, 0x01);
    const whole = Buffer.concat(messageSegments({ payload, buffers }));
    for (const size of [1, 3, 8, 13, 64, whole.length]) {
      const pieces = cut(whole, size);
      const split = splitMessagePieces(pieces);
      expect(split.buffers.map(joined), `cut every ${size}`).toEqual(buffers.map((b) => [...b]));
      expect([...split.payload]).toEqual([...payload]);
      const received = new Set(pieces.map((p) => p.buffer));
      for (const b of split.buffers) {
        for (const v of Array.isArray(b) ? b : [b]) expect(received.has(v.buffer)).toBe(true);
      }
      // Sent on as received: the same bytes.
      expect(Buffer.concat(messageSegments(split)).equals(whole)).toBe(true);
    }
  });

  it("refuses bytes that are not a message, with a SerializationError", () => {
    const cases: [Uint8Array, RegExp][] = [
      [bytes(0, 0, 1), /too short/],
      [bytes(0, 0, 0, 9, 0, 0, 0, 1), /announces 9 out-of-band buffers/],
      [bytes(0, 0, 0, 1, 0, 0, 0, 64, 1, 2, 3), /buffer 0 runs past the end/],
      // The buffer ends the bytes, with no room for its padding, let alone a payload.
      [bytes(0, 0, 0, 1, 0, 0, 0, 3, 1, 2, 3), /no payload after the out-of-band buffers/],
    ];
    for (const [b, why] of cases) {
      expect(() => splitMessage(b)).toThrow(SerializationError);
      expect(() => splitMessage(b)).toThrow(why);
      expect(() => splitMessagePieces(cut(b, 2))).toThrow(SerializationError);
      expect(() => splitMessagePieces(cut(b, 2))).toThrow(why);
    }
    expect(() => splitMessagePieces([])).toThrow(/too short/);
  });
});
