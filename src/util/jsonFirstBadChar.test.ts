import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonFirstBadChar } from "./jsonFirstBadChar.ts";

/**
 * JSON.parse's own word on a prefix: whether it is JSON, or JSON cut short (its
 * error at its very end). The scanner must agree with it on every text.
 */
function soFarRight(prefix: string): boolean {
  try {
    JSON.parse(prefix);
    return true;
  } catch (err) {
    const message = (err as Error).message;
    if (message === "Unexpected end of JSON input") return true;
    const at = / at position (\d+)$/.exec(message);
    return at !== null && Number(at[1]) >= prefix.length;
  }
}

/** The scanner's answer for `text` checked against JSON.parse's. */
function agrees(text: string): void {
  const bad = jsonFirstBadChar(text);
  let parses = true;
  try {
    JSON.parse(text);
  } catch {
    parses = false;
  }
  if (parses) {
    expect(bad, text).toBe(-1);
    return;
  }
  expect(bad, text).toBeGreaterThanOrEqual(0);
  expect(bad, text).toBeLessThanOrEqual(text.length);
  expect(soFarRight(text.slice(0, bad)), text).toBe(true);
  if (bad < text.length) expect(soFarRight(text.slice(0, bad + 1)), text).toBe(false);
}

describe("jsonFirstBadChar", () => {
  it("agrees with JSON.parse on every document and every prefix of one", () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 4 }), fc.nat(), (doc, n) => {
        expect(jsonFirstBadChar(doc)).toBe(-1);
        agrees(doc.slice(0, n % (doc.length + 1)));
      }),
      { numRuns: 500 },
    );
  });

  it("agrees with JSON.parse on documents with a character replaced, inserted or removed", () => {
    const slip = fc.constantFrom(..."{}[],:\"'\\-+.0123456789eEtrufalsn \t\n\r/bx\u0001\u001f");
    fc.assert(
      fc.property(fc.json({ maxDepth: 3 }), fc.nat(), slip, fc.nat(2), (doc, n, c, how) => {
        const i = n % (doc.length + 1);
        const text =
          how === 0
            ? doc.slice(0, i) + c + doc.slice(i + 1)
            : how === 1
              ? doc.slice(0, i) + c + doc.slice(i)
              : doc.slice(0, i) + doc.slice(i + 1);
        agrees(text);
      }),
      { numRuns: 2_000 },
    );
  });

  it("agrees with JSON.parse on texts of JSON's characters at random", () => {
    const chars = fc.constantFrom(...'{}[],:"\\-+.0123456789eEtrufalsn \nu');
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 24 }), (cs) => agrees(cs.join(""))),
      { numRuns: 3_000 },
    );
  });

  it("places the slips Node.js gives no place for", () => {
    expect(jsonFirstBadChar('{"a": [1, 2,]}')).toBe(12);
    expect(jsonFirstBadChar("{'a': 1}")).toBe(1);
    expect(jsonFirstBadChar('{"a": 1,}')).toBe(8);
    expect(jsonFirstBadChar('{"a": tru }')).toBe(9);
    expect(jsonFirstBadChar('{"a": NaN}')).toBe(6);
    expect(jsonFirstBadChar('{"a": 1')).toBe(7);
  });

  it("scans a text nested deeper than a call stack goes, and a large one, in one pass", () => {
    const deep = `${"[".repeat(200_000)}1${"]".repeat(199_999)},]`;
    expect(jsonFirstBadChar(deep)).toBe(deep.length - 1);
    const n = 400_000;
    const large = `{${Array.from({ length: n }, (_, i) => `"k${i}": ["f", ${i}]`).join(",")},}`;
    expect(large.length).toBeGreaterThan(8 * 2 ** 20);
    expect(jsonFirstBadChar(large)).toBe(large.length - 1);
  });
});
