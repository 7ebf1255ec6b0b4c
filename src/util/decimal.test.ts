import { describe, expect, it } from "vitest";
import { parseDecimal } from "./decimal.ts";

describe("parseDecimal", () => {
  it("reads decimal numbers, with a sign, a fraction or an exponent", () => {
    const given = ["0", "12", "+3", "-1.5", ".5", "5.", "1e3", "2.5E-3", "007"];
    expect(given.map(parseDecimal)).toEqual([0, 12, 3, -1.5, 0.5, 5, 1000, 0.0025, 7]);
  });

  it("refuses what Number reads otherwise: other bases, padding, blanks, Infinity", () => {
    for (const text of ["0x10", "0b11", "0o7", " 5 ", "5 ", "\t5", "", " ", "1_000"]) {
      expect(parseDecimal(text), JSON.stringify(text)).toBeNaN();
    }
    for (const text of ["Infinity", "-Infinity", "NaN", "1e", "e3", ".", "+", "1.2.3", "١٢"]) {
      expect(parseDecimal(text), text).toBeNaN();
    }
  });
});
