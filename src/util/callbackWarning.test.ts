import { describe, expect, it, vi } from "vitest";
import { warnCallbackFailed } from "./callbackWarning.ts";

describe("warnCallbackFailed", () => {
  it("warnCallbackFailed emits a process warning naming the callback and the error", () => {
    const spy = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    try {
      warnCallbackFailed("onX failed", "a string");
      expect(spy).toHaveBeenCalledWith("onX failed: Error: a string", {
        type: "WeftCallbackWarning",
        detail: expect.any(String),
      });
    } finally {
      spy.mockRestore();
    }
  });
});
