import { describe, expect, test } from "vitest";
import { Durations } from "./durations.ts";

describe("Durations", () => {
  test("a function's expected duration is the guess until a task finishes, then a moving average", () => {
    const d = new Durations(0.5);
    expect(d.expected("f")).toBe(0.5);
    expect(d.expected(undefined)).toBe(0.5);
    expect(d.has("f")).toBe(false);
    d.observe("f", 2);
    expect(d.expected("f")).toBe(2);
    d.observe("f", 4);
    expect(d.get("f")).toBe(3);
    expect(d.expected("g")).toBe(0.5);
  });

  test("the epoch moves when an expected duration changes, and only then", () => {
    const d = new Durations(0.5);
    d.observe("f", 0.5); // measured as guessed: nothing to re-cost
    expect(d.epoch).toBe(0);
    expect(d.has("f")).toBe(true);
    d.observe("f", 0.5);
    expect(d.epoch).toBe(0);
    d.observe("f", 1.5);
    expect(d.epoch).toBe(1);
    d.observe("g", 0.1);
    expect(d.epoch).toBe(2);
  });

  test("a negative, NaN or infinite measure is no measure", () => {
    const d = new Durations(0.5);
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) d.observe("f", bad);
    expect(d.has("f")).toBe(false);
    expect(d.epoch).toBe(0);
  });
});
