import { describe, expect, it } from "vitest";
import { hooksProblem } from "./hooksProblem.ts";

const HOOKS = ["start", "close"] as const;

describe("hooksProblem", () => {
  it("takes an object or a function whose given hooks are functions", () => {
    expect(hooksProblem({ start() {} }, HOOKS, "a plugin")).toBeNull();
    expect(
      hooksProblem(
        Object.assign(() => {}, { close() {} }),
        HOOKS,
        "a plugin",
      ),
    ).toBeNull();
  });

  it("names what it got when it is no object, null included", () => {
    expect(hooksProblem(null, HOOKS, "a plugin")).toBe("expected a plugin, got null");
    expect(hooksProblem(3, HOOKS, "a plugin")).toBe("expected a plugin, got 3");
  });

  it("names the first hook that is not a function, and its value", () => {
    expect(hooksProblem({ start: 1, close: "x" }, HOOKS, "a plugin")).toBe(
      "its start is not a function (1)",
    );
  });
});
