import { describe, expect, it } from "vitest";
import { parseTimedelta } from "./parseTimedelta.ts";

describe("parseTimedelta (dask's parse_timedelta)", () => {
  it("reads Dask's units, words and abbreviations, plural or not, any case", () => {
    expect(parseTimedelta("1 hour")).toBe(3600);
    expect(parseTimedelta("5m")).toBe(300);
    expect(parseTimedelta("300ms")).toBeCloseTo(0.3, 12);
    expect(parseTimedelta("1.5 h")).toBe(5400);
    expect(parseTimedelta("2 Days")).toBe(172_800);
    expect(parseTimedelta("1w")).toBe(604_800);
    expect(parseTimedelta("10us")).toBeCloseTo(1e-5, 15);
    expect(parseTimedelta("3 seconds")).toBe(3);
    expect(parseTimedelta("1e2s")).toBe(100);
    // A unit alone is one of it; a bare number is in the default unit.
    expect(parseTimedelta("minute")).toBe(60);
    expect(parseTimedelta("30")).toBe(30);
    expect(parseTimedelta(30)).toBe(30);
    expect(parseTimedelta("250", "ms")).toBeCloseTo(0.25, 12);
  });

  it("knows each of dask's timedelta_sizes, whatever the case", () => {
    const sizes: [string, number][] = [
      ["s", 1],
      ["ms", 1e-3],
      ["us", 1e-6],
      ["ns", 1e-9],
      ["m", 60],
      ["h", 3600],
      ["d", 86_400],
      ["w", 604_800],
      ["second", 1],
      ["minute", 60],
      ["hour", 3600],
      ["day", 86_400],
      ["week", 604_800],
      ["millisecond", 1e-3],
      ["microsecond", 1e-6],
      ["nanosecond", 1e-9],
    ];
    for (const [unit, seconds] of sizes) {
      for (const u of [unit, unit.toUpperCase(), `${unit}s`]) {
        if (u === `${unit}s` && unit.length <= 2) continue; // "ss", "mss": no units
        expect(parseTimedelta(`2 ${u}`), u).toBe(2 * seconds);
      }
    }
  });

  it("reads a number that begins with its point as that number, not 1 and it", () => {
    // Dask puts a 1 before what does not begin with a digit (so that a unit alone is
    // one of it), and reads ".5s" as 1.5 s and ".5h" as 1.5 hours, three times what was meant.
    expect(parseTimedelta(".5s")).toBe(0.5);
    expect(parseTimedelta(".5 h")).toBe(1800);
    expect(parseTimedelta(".25")).toBe(0.25);
    expect(parseTimedelta("h")).toBe(3600);
    expect(() => parseTimedelta(".s")).toThrow('not a duration: ".s"');
  });

  it("reads a number with a plus sign, as the other numeric options do", () => {
    // Dask refuses "+1" (its 1 put before what does not begin with a digit makes "1+1");
    // weft's counts, shares and sizes took "+1", its durations said "not a duration".
    expect(parseTimedelta("+0.002")).toBe(0.002);
    expect(parseTimedelta("+2ms")).toBe(0.002);
    expect(parseTimedelta("+ 1.5 h")).toBe(5400);
    expect(parseTimedelta("+.5s")).toBe(0.5);
    expect(() => parseTimedelta("+")).toThrow('not a duration: "+"');
    expect(() => parseTimedelta("+h")).toThrow('not a duration: "+h"');
    expect(() => parseTimedelta("++1")).toThrow('not a duration: "++1"');
  });

  it("reads a negative exponent", () => {
    expect(parseTimedelta("1e-3s")).toBe(1e-3);
    expect(parseTimedelta("25E-1 h")).toBe(9000);
  });

  it("refuses what is not a duration, saying why", () => {
    expect(() => parseTimedelta("")).toThrow("not a duration: an empty text");
    expect(() => parseTimedelta("5 parsecs")).toThrow(/invalid time unit "parsecs" \(valid: s, ms/);
    expect(() => parseTimedelta("-1s")).toThrow('not a duration: "-1s"');
    expect(() => parseTimedelta("1.2.3s")).toThrow('not a duration: "1.2.3s"');
    expect(() => parseTimedelta(Number.POSITIVE_INFINITY)).toThrow("not a duration: Infinity");
  });
});
