import { describe, expect, it } from "vitest";
import { errorMessage, TaskError } from "./errorMessage.ts";

describe("errorMessage", () => {
  it("gives an Error's name, message and stack below its first line", () => {
    const err = new RangeError("too far");
    const msg = errorMessage(err);
    expect(msg.exceptionText).toBe("RangeError: too far");
    expect(msg.tracebackText).toMatch(/^\s+at /);
    expect(msg.exception).toBe(err);
  });

  it("an Error whose stack is not a string keeps its name and message", () => {
    for (const stack of [42, { frames: [] }]) {
      const err = new TypeError("bad input");
      (err as { stack: unknown }).stack = stack;
      const msg = errorMessage(err);
      expect(msg.exceptionText).toBe("TypeError: bad input");
      expect(msg.tracebackText).toBe("");
      expect(msg.traceback).toBe("");
    }
  });

  it("keeps the texts of an error that carries them", () => {
    const msg = errorMessage(new TaskError("ZeroDivisionError()", "  File x"));
    expect([msg.exceptionText, msg.tracebackText]).toEqual(["ZeroDivisionError()", "  File x"]);
  });

  it("describes thrown values that are not errors as Node prints them", () => {
    expect(errorMessage("boom").exceptionText).toBe("boom");
    expect(errorMessage({ code: 3, why: "x" }).exceptionText).toBe("{ code: 3, why: 'x' }");
    expect(errorMessage([1, [2]]).exceptionText).toBe("[ 1, [ 2 ] ]");
    expect(errorMessage(undefined).exceptionText).toBe("undefined");
    expect(errorMessage(null).tracebackText).toBe("");
  });
});
