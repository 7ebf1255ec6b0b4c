import { describe, expect, it } from "vitest";
import { largeArgsOptions, MAX_MIB } from "./largeArgs.ts";

describe("bench:large-args", () => {
  it("checks its options before starting the cluster; --mib fits one message", () => {
    const ok = { mib: "200", runs: "7", warmup: "1" };
    expect(largeArgsOptions(ok)).toEqual({ mib: 200, runs: 7, warmup: 1 });
    expect(MAX_MIB).toBe(4095);
    expect(largeArgsOptions({ ...ok, mib: "4095" }).mib).toBe(4095);
    expect(() => largeArgsOptions({ ...ok, mib: "1000000000" })).toThrow(
      "--mib must be at most 4095 (the argument travels in one message of at most 4 GiB), got 1000000000",
    );
    expect(() => largeArgsOptions({ ...ok, mib: "0" })).toThrow("--mib must be a positive integer");
    expect(() => largeArgsOptions({ ...ok, warmup: "-1" })).toThrow(
      "--warmup must be an integer >= 0",
    );
  });
});
