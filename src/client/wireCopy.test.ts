import { describe, expect, it } from "vitest";
import { dataCopy } from "./wireCopy.ts";

describe("dataCopy", () => {
  it("copies data, so that changing the original afterwards changes nothing", () => {
    const value = { a: [1, 2], b: "x" };
    const copy = dataCopy("logEvent", value);
    value.a.push(3);
    expect(copy).toEqual({ a: [1, 2], b: "x" });
  });

  it("refuses what is not data with a TypeError naming the call", () => {
    expect(() => dataCopy("logEvent", { f: () => 1 })).toThrow(
      new TypeError("logEvent: the value cannot be sent: value.f is a function"),
    );
  });

  it("a value failing as it is read (a getter that throws) is refused naming where, the failure the cause", () => {
    const boom = new Error("boom");
    const value = {
      get a(): number {
        throw boom;
      },
    };
    let err: unknown = null;
    try {
      dataCopy("logEvent", value);
    } catch (e) {
      err = e;
    }
    expect(err).toEqual(
      new TypeError(
        "logEvent: the value cannot be sent: value.a cannot be read (a getter threw): Error: boom",
      ),
    );
    expect((err as Error).cause).toBe(boom);
  });
});
