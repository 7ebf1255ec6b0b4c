import { describe, expect, it } from "vitest";
import {
  collectTaskRefs,
  taskRef,
  taskSpecProblem,
  undeclaredTaskRef,
} from "./messagesTaskSpec.ts";

const args = [1, taskRef("a"), { x: [taskRef("b"), "c"], y: { z: taskRef("c") } }, "d"];

describe("task references in arguments", () => {
  it("are found at any depth in arrays and plain objects", () => {
    expect([...collectTaskRefs(args, new Set())].sort()).toEqual(["a", "b", "c"]);
  });

  it("undeclaredTaskRef names the first one not declared, in argument order", () => {
    expect(undeclaredTaskRef(args, ["a", "b", "c"])).toBeNull();
    expect(undeclaredTaskRef(args, ["a"])).toBe("b");
    expect(undeclaredTaskRef(args, ["b", "c"])).toBe("a");
    expect(undeclaredTaskRef(args, ["a", "b"])).toBe("c");
    expect(undeclaredTaskRef([1, "a", null, { a: "a" }], [])).toBeNull();
  });
});

describe("taskSpecProblem", () => {
  it("accepts {fn, args} and says what is wrong otherwise", () => {
    expect(taskSpecProblem({ fn: "inc", args: [1] })).toBeNull();
    expect(taskSpecProblem(null)).toBe("spec must be an object {fn, args}");
    expect(taskSpecProblem({ fn: "", args: [] })).toBe("spec.fn must be a non-empty string");
    expect(taskSpecProblem({ fn: "inc", args: 1 })).toBe("spec.args must be an array");
  });
});
