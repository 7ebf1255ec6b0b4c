import { describe, expect, it } from "vitest";
import { asError } from "./asError.ts";

describe("asError", () => {
  it("keeps an Error, makes one of anything else, and never throws", () => {
    const e = new RangeError("r");
    expect(asError(e)).toBe(e);
    expect(asError("text")).toEqual(new Error("text"));
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("proxy trap");
        },
        getPrototypeOf() {
          throw new Error("prototype trap");
        },
      },
    );
    expect(asError(hostile).message).toBe(
      "an error whose fields cannot be read (Error: proxy trap)",
    );
  });
});
