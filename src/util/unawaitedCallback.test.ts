import { describe, expect, it } from "vitest";
import { unawaitedCallback } from "./unawaitedCallback.ts";

describe("unawaitedCallback", () => {
  it("says a rejection of the promise the callback returns once, as a process warning", async () => {
    const seen: Error[] = [];
    const onWarning = (w: Error) => seen.push(w);
    process.on("warning", onWarning);
    try {
      const calls: number[] = [];
      const guarded = unawaitedCallback(async (n: number) => {
        calls.push(n);
        throw new Error(`no ${n}`);
      }, "the onProgress of a test");
      guarded(1);
      guarded(2);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(calls).toEqual([1, 2]);
      expect(seen.map((w) => [w.name, w.message])).toEqual([
        ["WeftCallbackWarning", "the onProgress of a test failed: Error: no 1"],
      ]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("lets a throw through, and a callback's value alone", () => {
    const thrown = unawaitedCallback(() => {
      throw new Error("stop");
    }, "x");
    expect(() => thrown()).toThrow("stop");
    const plain = unawaitedCallback((_: number) => 7 as unknown as undefined, "x");
    expect(plain(1)).toBeUndefined();
  });
});
