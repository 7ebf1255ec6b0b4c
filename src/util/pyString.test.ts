import { describe, expect, it } from "vitest";
import { isPyWhitespace, pyIsAlpha, pyLen, pySplitWhitespace, pyStrip } from "./pyString.ts";

describe("pyString", () => {
  it("isPyWhitespace follows str.isspace, not JS \\s", () => {
    expect(isPyWhitespace(0x20)).toBe(true);
    expect(isPyWhitespace(0x1f)).toBe(true); // '\x1f'.isspace() is True
    expect(isPyWhitespace(0x85)).toBe(true);
    expect(isPyWhitespace(0xfeff)).toBe(false); // JS \s matches it, Python does not
    expect(isPyWhitespace(0x41)).toBe(false);
  });

  it("pySplitWhitespace is str.split()", () => {
    expect(pySplitWhitespace("  a b\t\tc\n")).toEqual(["a", "b", "c"]);
    expect(pySplitWhitespace("")).toEqual([]);
    expect(pySplitWhitespace(" \u3000 ")).toEqual([]);
    expect(pySplitWhitespace("a\x1cb\ufeffc")).toEqual(["a", "b\ufeffc"]);
  });

  it("pyStrip is str.strip(chars) / str.strip()", () => {
    expect(pyStrip("_'(x)'_", "_'()")).toBe("x");
    expect(pyStrip("((()))", "()")).toBe("");
    expect(pyStrip("<a>", "<>")).toBe("a");
    expect(pyStrip("\t x \x85")).toBe("x");
    expect(pyStrip("x")).toBe("x");
  });

  it("pyIsAlpha is str.isalpha", () => {
    expect(pyIsAlpha("abc")).toBe(true);
    expect(pyIsAlpha("café")).toBe(true);
    expect(pyIsAlpha("λ")).toBe(true);
    expect(pyIsAlpha("")).toBe(false);
    expect(pyIsAlpha("a1")).toBe(false);
    expect(pyIsAlpha("a_b")).toBe(false);
    expect(pyIsAlpha("🎉")).toBe(false);
    expect(pyIsAlpha("𝐀")).toBe(true); // astral letter
  });

  it("pyLen counts code points", () => {
    expect(pyLen("abc")).toBe(3);
    expect(pyLen("🎉x")).toBe(2);
    expect(pyLen("")).toBe(0);
    expect(pyLen("\ud800x")).toBe(2); // lone surrogate counts once
  });
});
