import { describe, expect, it } from "vitest";
import { checkSubmitOptions, graphTask } from "./submitOptions.ts";

describe("checkSubmitOptions", () => {
  it("refuses an empty key, and an actor flag that is not a boolean, naming the call", () => {
    expect(() => checkSubmitOptions("submitWith", { key: "" })).toThrow(
      new TypeError('submitWith: key must be a non-empty string, got ""'),
    );
    expect(() => checkSubmitOptions("submitWith", { actor: 1 as never })).toThrow(
      new TypeError("submitWith: actor must be a boolean, got 1"),
    );
    checkSubmitOptions("submitWith", { key: "k", actor: false, pure: true });
  });
});

describe("graphTask", () => {
  it("marks the task of an actor, and no other", () => {
    expect(graphTask("counter", [0], null, { actor: true })).toEqual({
      spec: { fn: "counter", args: [0] },
      dependencies: [],
      actor: true,
    });
    expect(graphTask("inc", [1], new Set(["a"]), { actor: false, priority: 2 })).toEqual({
      spec: { fn: "inc", args: [1] },
      dependencies: ["a"],
      priority: 2,
    });
  });
});
