import { describe, expect, it } from "vitest";
import { formatLogEntry } from "./errors.ts";

describe("formatLogEntry: a story entry printed as Python prints the tuple", () => {
  it("prints strings, None, booleans, lists, sets and dicts as Python does", () => {
    expect(formatLogEntry(["x", "ready", "executing", new Map([["y", "fetch"]]), "s-1", 2.5])).toBe(
      "('x', 'ready', 'executing', {'y': 'fetch'}, 's-1', 2.5)",
    );
    expect(formatLogEntry(["x", null, true, [1, "a"], new Set(["w"])])).toBe(
      "('x', None, True, [1, 'a'], {'w'})",
    );
  });

  it("gives a one-element tuple its comma and an empty set its name", () => {
    expect(formatLogEntry(["slow-0"])).toBe("('slow-0',)");
    expect(formatLogEntry(["x", new Set()])).toBe("('x', set())");
    expect(formatLogEntry(["x", new Map()])).toBe("('x', {})");
  });
});
