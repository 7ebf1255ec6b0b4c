import { describe, expect, it } from "vitest";
import { serializeError, wireErrorMessage } from "./executor.ts";
import { MAX_ERROR_LENGTH } from "./state/errorMessage.ts";

describe("serializeError", () => {
  it("gives an error's name, message, stack and texts", () => {
    const e = serializeError(new RangeError("too far"));
    expect(e.name).toBe("RangeError");
    expect(e.message).toBe("too far");
    expect(e.stack).toMatch(/^RangeError: too far\n\s+at /);
    expect(e.exceptionText).toBe("RangeError: too far");
    expect(e.stack).toBe(`RangeError: too far\n${e.tracebackText}`);
  });

  it("cuts a long message everywhere it appears, keeping the frames", () => {
    const huge = "x".repeat(5_000_000);
    const e = serializeError(new Error(huge));
    const cut = `${"x".repeat(MAX_ERROR_LENGTH)}… [${5_000_000 - MAX_ERROR_LENGTH} more characters cut]`;
    expect(e.message).toBe(cut);
    expect(e.stack).toBe(`Error: ${cut}\n${e.tracebackText}`);
    expect(e.tracebackText).toMatch(/^\s+at /);
    expect(e.exceptionText.length).toBeLessThan(MAX_ERROR_LENGTH + 100);
    const wire = wireErrorMessage(new Error(huge));
    expect(JSON.stringify(wire).length).toBeLessThan(5 * MAX_ERROR_LENGTH);
  });

  it("cuts a stack whose header is not the error's own", () => {
    const err = new Error("short");
    err.stack = `Custom ${"s".repeat(MAX_ERROR_LENGTH * 3)}`;
    const e = serializeError(err);
    expect(e.stack.length).toBeLessThan(MAX_ERROR_LENGTH + 100);
    expect(e.message).toBe("short");
  });

  it("cuts a thrown value that is no error", () => {
    const e = serializeError("y".repeat(MAX_ERROR_LENGTH * 2));
    expect(e.message.length).toBeLessThan(MAX_ERROR_LENGTH + 100);
    expect(e.exceptionText).toBe(e.message);
  });
});
