import { describe, expect, it } from "vitest";
import { errorMessage, MAX_ERROR_LENGTH, TaskError, truncateErrorText } from "./errorMessage.ts";

describe("errorMessage", () => {
  it("gives an Error's name, message and stack below its first line", () => {
    const err = new RangeError("too far");
    const msg = errorMessage(err);
    expect(msg.exceptionText).toBe("RangeError: too far");
    expect(msg.tracebackText).toMatch(/^\s+at /);
    expect(msg.exception).toBe(err);
  });

  it("gives an empty message's Error its name alone, as Python's format_exception_only", () => {
    expect(errorMessage(new Error()).exceptionText).toBe("Error");
    expect(errorMessage(new TypeError("")).exceptionText).toBe("TypeError");
    class ParseFailure extends Error {
      override name = "ParseFailure";
    }
    expect(errorMessage(new ParseFailure()).exceptionText).toBe("ParseFailure");
    expect(errorMessage(new ParseFailure("line 1\nline 2")).exceptionText).toBe(
      "ParseFailure: line 1\nline 2",
    );
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

describe("long errors", () => {
  it("cuts texts over MAX_ERROR_LENGTH, as Dask's max-error-length, saying how much", () => {
    const err = new Error("x".repeat(MAX_ERROR_LENGTH + 500));
    const msg = errorMessage(err);
    expect(msg.exceptionText).toBe(
      `Error: ${"x".repeat(MAX_ERROR_LENGTH - 7)}… [507 more characters cut]`,
    );
    expect(msg.tracebackText).toMatch(/^\s+at /);
    expect(msg.exception).toBe(err);
    expect(errorMessage("y".repeat(20_000)).exceptionText).toHaveLength(
      MAX_ERROR_LENGTH + "… [10000 more characters cut]".length,
    );
  });

  it("keeps texts up to MAX_ERROR_LENGTH whole", () => {
    const text = "z".repeat(MAX_ERROR_LENGTH);
    expect(truncateErrorText(text)).toBe(text);
    expect(truncateErrorText(`${text}!`)).toBe(`${text}… [1 more characters cut]`);
  });

  it("never splits a surrogate pair", () => {
    const cut = truncateErrorText(`${"a".repeat(9)}😀tail`, 10);
    expect(cut).toBe(`${"a".repeat(9)}… [6 more characters cut]`);
    expect(cut.isWellFormed()).toBe(true);
  });

  it("keeps the texts of a TaskError whole (a replayed recording's)", () => {
    const long = "e".repeat(MAX_ERROR_LENGTH * 2);
    expect(errorMessage(new TaskError(long, long)).exceptionText).toBe(long);
  });

  it("takes the frames after a message of several lines, not after its first line", () => {
    const msg = errorMessage(new Error("line one\nline two"));
    expect(msg.exceptionText).toBe("Error: line one\nline two");
    expect(msg.tracebackText).toMatch(/^\s+at /);
    expect(msg.tracebackText).not.toContain("line two");
  });
});
