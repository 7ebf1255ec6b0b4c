import { describe, expect, it } from "vitest";
import { showValue } from "./showValue.ts";

describe("showValue", () => {
  it("shows JSON values as JSON", () => {
    expect(showValue("a")).toBe('"a"');
    expect(showValue({ a: [1, null] })).toBe('{"a":[1,null]}');
  });

  it("shows numbers JSON would print as null", () => {
    expect(showValue(Number.NaN)).toBe("NaN");
    expect(showValue(Number.NEGATIVE_INFINITY)).toBe("-Infinity");
    expect(showValue([1, Number.POSITIVE_INFINITY])).toBe('[1,"Infinity"]');
  });

  it("shows what JSON cannot hold without throwing", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(showValue(12n)).toBe('"12n"');
    expect(showValue({ n: 1n })).toBe('{"n":"1n"}');
    expect(showValue(cyclic)).toBe("[object Object]");
    expect(showValue(Object.create(null))).toBe("{}");
    expect(showValue(Symbol("s"))).toBe("Symbol(s)");
    expect(showValue(undefined)).toBe("undefined");
    const hostile = Object.create(null);
    hostile.toJSON = () => {
      throw new Error("no");
    };
    expect(showValue(hostile)).toBe("[object Object]");
  });

  it("cuts long values", () => {
    expect(showValue("x".repeat(100), 10)).toBe(`"${"x".repeat(9)}…`);
    expect(showValue("x".repeat(100))).toBe(`"${"x".repeat(59)}…`); // 60 by default
  });
});
