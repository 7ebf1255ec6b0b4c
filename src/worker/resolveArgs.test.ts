import { describe, expect, it } from "vitest";
import { taskRef } from "../protocol/messagesTaskSpec.ts";
import { MissingDependencyError, resolveArgs } from "./resolveArgs.ts";

const data = new Map<string, unknown>([
  ["a", 1],
  ["b", { v: 2 }],
]);

describe("resolveArgs", () => {
  it("replaces references at any depth in arrays and plain objects", () => {
    const args = [taskRef("a"), { x: [taskRef("b"), 3], y: "s" }, [[taskRef("a")]]];
    expect(resolveArgs(args, data, "k")).toEqual([1, { x: [{ v: 2 }, 3], y: "s" }, [[1]]]);
  });

  it("returns the input when there is nothing to replace, and never modifies it", () => {
    const args = [1, { x: [2] }];
    expect(resolveArgs(args, data, "k")).toBe(args);
    const withRef = [{ keep: { deep: 1 }, ref: taskRef("a") }];
    const out = resolveArgs(withRef, data, "k") as { keep: unknown; ref: unknown }[];
    expect(withRef[0].ref).toEqual(taskRef("a"));
    expect(out[0].keep).toBe(withRef[0].keep);
  });

  it("leaves class instances and Maps alone", () => {
    const m = new Map([["r", taskRef("a")]]);
    expect(resolveArgs([m], data, "k")[0]).toBe(m);
  });

  it("a reference to a value not held fails clearly", () => {
    expect(() => resolveArgs([taskRef("zzz")], data, "k")).toThrow(MissingDependencyError);
    expect(() => resolveArgs([taskRef("zzz")], data, "k")).toThrow(
      'task "k" refers to "zzz", which is not in memory on this worker',
    );
  });
});
