import { describe, expect, it } from "vitest";
import { showCycle } from "./showCycle.ts";

const cycle = (n: number): string[] => [...Array.from({ length: n }, (_, i) => `k${i}`), "k0"];

describe("showCycle", () => {
  it("shows a cycle of up to 11 keys whole (its first key repeated at its end)", () => {
    expect(showCycle(["a", "b", "a"])).toBe("a → b → a");
    expect(showCycle(cycle(10))).toBe(cycle(10).join(" → "));
  });

  it("abbreviates a longer one to its first 8 keys and last 2", () => {
    expect(showCycle(cycle(11))).toBe(
      "k0 → k1 → k2 → k3 → k4 → k5 → k6 → k7 → … (2 more) … → k10 → k0",
    );
  });
});
