import { afterEach, describe, expect, it } from "vitest";
import { Metadata } from "./metadata.ts";

describe("Metadata", () => {
  afterEach(() => {
    // Leave nothing behind should a path have reached Object.prototype.
    delete (Object.prototype as Record<string, unknown>).polluted;
  });

  it("a path goes into a value's own keys only: not into Object.prototype through __proto__", () => {
    const m = new Metadata();
    // A plain object set by a client, as the scheduler gets it: with Object.prototype.
    m.set(["a"], { b: 1 });
    m.set(["a", "__proto__", "polluted"], "yes");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(m.get(["a", "__proto__", "polluted"])).toEqual({ found: true, value: "yes" });
    expect(m.get(["a", "b"])).toEqual({ found: true, value: 1 });
  });

  it("a key a plain object inherits (toString, constructor) is no value under it: the path goes on", () => {
    const m = new Metadata();
    m.set(["a"], { b: 1 });
    m.set(["a", "toString", "x"], 1);
    m.set(["a", "constructor", "y"], 2);
    expect(m.get(["a", "toString", "x"])).toEqual({ found: true, value: 1 });
    expect(m.get(["a", "constructor", "y"])).toEqual({ found: true, value: 2 });
    const a = m.get(["a"]) as { value: object };
    expect(Object.keys(a.value)).toEqual(["b", "toString", "constructor"]);
  });
});
