import { describe, expect, test } from "vitest";
import { cutEnd, cutText } from "./cutText.ts";

describe("cutText", () => {
  test("keeps text that fits, cuts longer text and marks the cut", () => {
    expect(cutText("abc", 3)).toBe("abc");
    expect(cutText("abcd", 3)).toBe("abc…");
    expect(cutText("abcd", 3, " [cut]")).toBe("abc [cut]");
    expect(cutText("abcd", 0)).toBe("…");
  });

  test("never splits a surrogate pair", () => {
    const s = "ab😀cd"; // 😀 is two UTF-16 units, at 2 and 3
    expect(cutEnd(s, 3)).toBe(2);
    expect(cutText(s, 3)).toBe("ab…");
    expect(cutText(s, 4)).toBe("ab😀…");
    expect(cutText(s, 2)).toBe("ab…");
    expect(Buffer.from(cutText(s, 3)).toString()).not.toContain("\uFFFD");
  });

  test("a lone low surrogate at the cut is kept: there is no pair to split", () => {
    expect(cutEnd("a\uDC00bc", 2)).toBe(2);
  });

  test("every high surrogate, U+D800 to U+DBFF, counts as the first half of a pair", () => {
    expect(cutEnd("\uD800\uDC00x", 1)).toBe(0);
    expect(cutEnd("\uDBFF\uDFFFx", 1)).toBe(0);
  });

  test("text that fits is kept whole, even ending in a lone high surrogate", () => {
    expect(cutEnd("a\uD800", 5)).toBe(2);
    expect(cutEnd("a\uD800", 2)).toBe(2);
  });

  test("max outside 0..length is clamped", () => {
    expect(cutEnd("abc", 10)).toBe(3);
    expect(cutEnd("abc", -1)).toBe(0);
  });
});
