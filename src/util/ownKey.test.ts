import { describe, expect, it } from "vitest";
import { setOwnKey } from "./ownKey.ts";

describe("setOwnKey", () => {
  it("keeps a key named __proto__ as a key, leaving the prototype alone", () => {
    const o: Record<string, unknown> = {};
    setOwnKey(o, "__proto__", { polluted: true });
    expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
    expect(Object.keys(o)).toEqual(["__proto__"]);
    expect(JSON.stringify(o)).toBe('{"__proto__":{"polluted":true}}');
  });
});
