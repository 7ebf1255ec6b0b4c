import { describe, expect, it } from "vitest";
import {
  isPyWhitespace,
  pyIsAlpha,
  pyKeyRepr,
  pyLen,
  pyRepr,
  pySplitWhitespace,
  pyStrip,
} from "./pyString.ts";

describe("pyString", () => {
  it("isPyWhitespace follows str.isspace, not JS \\s", () => {
    expect(isPyWhitespace(0x20)).toBe(true);
    expect(isPyWhitespace(0x1f)).toBe(true); // '\x1f'.isspace() is True
    expect(isPyWhitespace(0x85)).toBe(true);
    expect(isPyWhitespace(0xfeff)).toBe(false); // JS \s matches it, Python does not
    expect(isPyWhitespace(0x41)).toBe(false);
    expect(isPyWhitespace(0x0b)).toBe(true); // vertical tab
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
    // The last high and the last low surrogate still pair up.
    expect(pyLen("\udbff\udc00")).toBe(1);
    expect(pyLen("\ud800\udfff")).toBe(1);
  });
});

describe("pyRepr / pyKeyRepr: how Python prints strings and keys", () => {
  it("quotes as Python's repr does", () => {
    expect(pyRepr("x-1")).toBe("'x-1'");
    expect(pyRepr("it's-1")).toBe(`"it's-1"`);
    expect(pyRepr(`both ' and "`)).toBe(`'both \\' and "'`);
    expect(pyRepr("a\\b\nc\u0001")).toBe("'a\\\\b\\nc\\x01'");
    expect(pyRepr("héllo")).toBe("'héllo'");
  });

  it("escapes what Python's str.isprintable() rejects, as Python 3.11 prints it", () => {
    // Each expected text is Python's repr() of the same string.
    const cases: [string, string][] = [
      ["a\u00a0b", "'a\\xa0b'"],
      ["zero\u200bwidth", "'zero\\u200bwidth'"],
      ["line\u2028sep", "'line\\u2028sep'"],
      ["\ue000priv", "'\\ue000priv'"],
      ["emoji\u{1f600}", "'emoji\u{1f600}'"],
      ["\u{e0001}tag", "'\\U000e0001tag'"],
      ["\u0085nel", "'\\x85nel'"],
      ["soft\u00adhy", "'soft\\xadhy'"],
      ["\u{10ffff}", "'\\U0010ffff'"],
      ["ideo\u3000sp", "'ideo\\u3000sp'"],
      ["combining e\u0301", "'combining e\u0301'"],
      ["lone\ud800x", "'lone\\ud800x'"],
      ["del\u007f", "'del\\x7f'"],
      ["us\u001f", "'us\\x1f'"],
      ["a\r\tb", "'a\\r\\tb'"],
      ["non\uffff", "'non\\uffff'"],
    ];
    for (const [s, repr] of cases) expect(pyRepr(s)).toBe(repr);
  });

  it("prints a key that was a tuple (its str() form) as the tuple", () => {
    expect(pyKeyRepr("('slow', 1)")).toBe("('slow', 1)");
    expect(pyKeyRepr("('x', 0, 2.5)")).toBe("('x', 0, 2.5)");
    expect(pyKeyRepr("('solo',)")).toBe("('solo',)");
    expect(pyKeyRepr(`("it's", 3)`)).toBe(`("it's", 3)`);
    expect(pyKeyRepr("(not a tuple)")).toBe("'(not a tuple)'");
    expect(pyKeyRepr("slow-1")).toBe("'slow-1'");
    // Python's str() of these tuples.
    for (const t of [
      "('x', None)",
      "('x', True, False)",
      "('x', 1e+20)",
      "('x', 1.5e-07)",
      "('x', ('y', 1))",
      "(('a', 1),)",
      "('x', -3)",
      "('x', inf)",
      "()",
    ]) {
      expect(pyKeyRepr(t)).toBe(t);
    }
    expect(pyKeyRepr("(x, 1)")).toBe("'(x, 1)'");
    expect(pyKeyRepr("('a' 1)")).toBe(`"('a' 1)"`);
    expect(pyKeyRepr("('a', 1,)")).toBe(`"('a', 1,)"`);
    expect(pyKeyRepr("('a')")).toBe(`"('a')"`); // a one-item tuple prints its comma
    expect(pyKeyRepr("('a', 1)x")).toBe(`"('a', 1)x"`);
  });
});
