import { describe, expect, it } from "vitest";
import { CachedClonedValue } from "./cachedClonedValue.ts";
import { ClonedValue } from "./clonedValue.ts";
import { decodeMessage, encodeMessage } from "./wireCodec.ts";

function roundTrip(msg: unknown): unknown {
  const { payload, buffers } = encodeMessage(msg);
  return decodeMessage(payload, buffers);
}

describe("CachedClonedValue", () => {
  it("is received as the cloned value it holds", () => {
    const value = { step: 1, seen: new Set([1, 2]), big: 10n };
    const got = roundTrip({ op: "reply", result: [[1, new CachedClonedValue(value)]] }) as {
      result: [number, ClonedValue][];
    };
    expect(got.result[0]?.[1]).toBeInstanceOf(ClonedValue);
    expect(got.result[0]?.[1]?.value).toEqual(value);
  });

  it("encodes its value once: the next encodings send the first one's bytes", () => {
    const value = { step: 1 };
    const cached = new CachedClonedValue(value);
    roundTrip(cached);
    // Changed after it was sent (what holds one must not): the bytes made first go on.
    value.step = 2;
    expect((roundTrip(cached) as ClonedValue).value).toEqual({ step: 1 });
    expect((roundTrip(new ClonedValue(value)) as ClonedValue).value).toEqual({ step: 2 });
  });

  it("wraps a cloned value once and leaves anything else as it is", () => {
    const plain = { action: "add-worker" };
    expect(CachedClonedValue.of(plain)).toBe(plain);
    const wrapped = CachedClonedValue.of(new ClonedValue(plain));
    expect(wrapped).toBeInstanceOf(CachedClonedValue);
    expect(CachedClonedValue.of(wrapped)).toBe(wrapped);
  });
});
