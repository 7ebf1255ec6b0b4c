import { describe, expect, it } from "vitest";
import { byteSize, frameLimitsFrom, MIN_MAX_MESSAGE_BYTES, parseResources } from "./serveUntil.ts";

describe("parseResources (weft worker --resources)", () => {
  it("reads NAME=AMOUNT pairs", () => {
    expect(parseResources("GPU=1,MEM=8e9")).toEqual({ GPU: 1, MEM: 8e9 });
    expect(parseResources("GPU=0")).toEqual({ GPU: 0 });
    expect(parseResources("")).toEqual({});
  });

  it("refuses a pair without an amount instead of reading it as 0", () => {
    for (const bad of ["GPU=", "GPU= ", "GPU", "=1", "GPU=x", "GPU=-1", "GPU=1,MEM="]) {
      expect(() => parseResources(bad), bad).toThrow(/expected NAME=AMOUNT/);
    }
  });
});

describe("byteSize (--max-frame-bytes, --max-message-bytes)", () => {
  it("reads sizes as Dask writes them", () => {
    expect(byteSize("--max-frame-bytes", "64MiB")).toBe(64 * 2 ** 20);
    expect(byteSize("--max-frame-bytes", "4GB")).toBe(4e9);
    expect(byteSize("--max-frame-bytes", "1e6")).toBe(1e6);
  });

  it("refuses an empty size instead of reading it as 1 byte", () => {
    for (const bad of ["", " ", "x", "0"]) {
      expect(() => byteSize("--max-message-bytes", bad), JSON.stringify(bad)).toThrow(
        /--max-message-bytes must be a size such as 64MiB or 4GB/,
      );
    }
  });
});

describe("frameLimitsFrom", () => {
  it("takes the sizes given, and nothing for those not given", () => {
    expect(frameLimitsFrom({})).toEqual({});
    expect(frameLimitsFrom({ maxFrameBytes: "1KiB", maxMessageBytes: "64KiB" })).toEqual({
      maxFrameBytes: 1024,
      maxMessageBytes: MIN_MAX_MESSAGE_BYTES,
    });
  });

  it("refuses a --max-message-bytes too small for the cluster's own messages", () => {
    expect(() => frameLimitsFrom({ maxMessageBytes: "300" })).toThrow(
      /^--max-message-bytes must be at least 64KiB \(a cluster's own messages, such as a worker's registration and heartbeats, need room\), got "300" \(300 bytes; a size without a unit is in bytes\)$/,
    );
    expect(() => frameLimitsFrom({ maxMessageBytes: "63KiB" })).toThrow(
      /got "63KiB" \(64512 bytes\)$/,
    );
  });
});
