import { describe, expect, it } from "vitest";
import { MAX_TIMER_MS } from "../util/timers.ts";
import { checkOptionalMs, itemsOf } from "./argChecks.ts";

describe("itemsOf", () => {
  it("gives the items of any iterable as an array, and refuses an object that is none", () => {
    expect(itemsOf("map", "items", new Set([1, 2]))).toEqual([1, 2]);
    expect(Array.isArray(itemsOf("map", "items", new Set([1, 2])))).toBe(true);
    expect(() => itemsOf("map", "items", { a: 1 })).toThrow(
      new TypeError('map: items must be an array or another iterable, got {"a":1}'),
    );
  });
});

describe("checkOptionalMs", () => {
  it("takes up to what a timer can wait, and no more", () => {
    checkOptionalMs("wait", "timeoutMs", MAX_TIMER_MS);
    expect(() => checkOptionalMs("wait", "timeoutMs", MAX_TIMER_MS + 1)).toThrow(
      new TypeError(
        `wait: timeoutMs must be a number of milliseconds ≥ 0 and at most ${MAX_TIMER_MS}, got ${MAX_TIMER_MS + 1}`,
      ),
    );
    expect(() => checkOptionalMs("wait", "timeoutMs", Number.POSITIVE_INFINITY)).toThrow(
      /^wait: timeoutMs must be .*, got Infinity$/,
    );
  });
});
