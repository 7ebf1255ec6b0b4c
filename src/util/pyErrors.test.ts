import { describe, expect, it } from "vitest";
import { AssertionError, assert, KeyError, setRemove } from "./pyErrors.ts";

function checksPositive(n: number): void {
  assert(n > 0);
}

describe("assert", () => {
  it("passes on a true condition and raises an AssertionError otherwise", () => {
    expect(() => assert(1)).not.toThrow();
    expect(() => assert(0, "nope")).toThrow(new AssertionError("nope"));
    expect(() => assert(false, () => "lazy")).toThrow(/^lazy$/);
  });

  it("without a message, names the function and line of the failed check", () => {
    const err = (() => {
      try {
        checksPositive(-1);
      } catch (e) {
        return e as Error;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(AssertionError);
    expect(err?.message).toMatch(/^assertion failed in checksPositive \(pyErrors\.test\.ts:\d+\)$/);
  });

  it("without a message, from an anonymous function, names the file and line alone", () => {
    expect(() => assert(false)).toThrow(/^assertion failed at pyErrors\.test\.ts:\d+$/);
  });
});

describe("setRemove", () => {
  it("removes a member and raises KeyError for a missing one, as Python's set.remove", () => {
    const s = new Set(["a"]);
    setRemove(s, "a");
    expect(s.size).toBe(0);
    expect(() => setRemove(s, "a")).toThrow(KeyError);
  });
});

describe("KeyError", () => {
  it("carries the missing key, and names it (a string quoted) in its message, its name apart", () => {
    const e = new KeyError("a");
    expect(e.key).toBe("a");
    expect(e.name).toBe("KeyError");
    // The key alone, as Python's str(KeyError("a")): String(e) is `KeyError: "a"`, once.
    expect(e.message).toBe('"a"');
    expect(String(e)).toBe('KeyError: "a"');
    expect(new KeyError(3).message).toBe("3");
    expect(new KeyError(3, "custom").message).toBe("custom");
  });
});
