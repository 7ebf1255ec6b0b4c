import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ANSWER_OVERHEAD_BYTES, ENTRY_OVERHEAD_BYTES, getDataParts } from "./getDataParts.ts";

const size = (key: string, nbytes: number) =>
  Buffer.byteLength(key) + nbytes + ENTRY_OVERHEAD_BYTES;

describe("getDataParts", () => {
  it("is one part of every key where there is no limit", () => {
    expect(getDataParts(["a", "b", "c"], () => 1e9, undefined)).toEqual([["a", "b", "c"]]);
  });

  it("is one part where the answer fits", () => {
    expect(getDataParts(["a", "b"], () => 100, 1e6)).toEqual([["a", "b"]]);
  });

  it("splits many long keys of small values, in order", () => {
    const keys = Array.from({ length: 300 }, (_, i) => `${"k".repeat(4096)}-${i}`);
    const parts = getDataParts(keys, () => 28, 2 ** 20);
    expect(parts.length).toBe(2);
    expect(parts.flat()).toEqual(keys);
  });

  it("counts names in UTF-8 bytes", () => {
    const limit = ANSWER_OVERHEAD_BYTES + 2 * size("é".repeat(100), 0);
    // 200 bytes a name, not 100 characters: two fit, the third starts a part.
    expect(
      getDataParts(["é".repeat(100), "é".repeat(100), "é".repeat(100)], () => 0, limit),
    ).toEqual([["é".repeat(100), "é".repeat(100)], ["é".repeat(100)]]);
  });

  it("gives a key too large alone a part alone", () => {
    expect(getDataParts(["a", "big", "b"], (k) => (k === "big" ? 1e9 : 1), 10_000)).toEqual([
      ["a"],
      ["big"],
      ["b"],
    ]);
  });

  it("keeps every key once, in order, each part within the limit unless it is one key", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ maxLength: 50 }), fc.nat(5000)), { maxLength: 60 }),
        fc.integer({ min: 1, max: 20_000 }),
        (entries, limit) => {
          const keys = [...new Map(entries).keys()];
          const nbytes = new Map(entries);
          const nbytesOf = (k: string) => nbytes.get(k) ?? 0;
          const parts = getDataParts(keys, nbytesOf, limit);
          expect(parts.flat()).toEqual(keys);
          for (const part of parts) {
            const bytes = part.reduce((n, k) => n + size(k, nbytesOf(k)), ANSWER_OVERHEAD_BYTES);
            if (part.length > 1) expect(bytes).toBeLessThanOrEqual(limit);
          }
          // Greedy: a part and the next one's first key would not have fit together.
          for (let i = 0; i + 1 < parts.length; i++) {
            const next = parts[i + 1][0];
            const bytes = [...parts[i], next].reduce(
              (n, k) => n + size(k, nbytesOf(k)),
              ANSWER_OVERHEAD_BYTES,
            );
            expect(bytes).toBeGreaterThan(limit);
          }
        },
      ),
    );
  });
});
