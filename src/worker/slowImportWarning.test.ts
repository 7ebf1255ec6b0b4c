import { afterEach, describe, expect, it, vi } from "vitest";
import { SLOW_IMPORT_WARNING_MS, warningIfSlow } from "./slowImportWarning.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("warningIfSlow", () => {
  it("warns, naming the modules, of an import not settled after the delay, and still waits for it", async () => {
    vi.useFakeTimers();
    const warn = vi.fn();
    let settle: (v: string) => void = () => {};
    const work = new Promise<string>((resolve) => {
      settle = resolve;
    });
    const result = warningIfSlow({ warn }, ["file:///srv/hang.mjs"], work);
    await vi.advanceTimersByTimeAsync(SLOW_IMPORT_WARNING_MS - 1);
    expect(warn).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toEqual({ modules: ["file:///srv/hang.mjs"] });
    expect(warn.mock.calls[0][1]).toContain("has not finished after 10 s");
    settle("done");
    expect(await result).toBe("done");
  });

  it("says nothing of an import that settles in time, failing or not", async () => {
    vi.useFakeTimers();
    const warn = vi.fn();
    await warningIfSlow({ warn }, ["file:///srv/a.mjs"], Promise.resolve(1));
    await expect(
      warningIfSlow({ warn }, ["file:///srv/b.mjs"], Promise.reject(new Error("broken"))),
    ).rejects.toThrow("broken");
    await vi.advanceTimersByTimeAsync(2 * SLOW_IMPORT_WARNING_MS);
    expect(warn).not.toHaveBeenCalled();
  });
});
