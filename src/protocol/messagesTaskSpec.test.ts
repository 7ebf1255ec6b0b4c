import { describe, expect, it } from "vitest";
import {
  collectTaskRefs,
  MAX_ARG_DEPTH,
  taskArgsProblem,
  taskRef,
  taskSpecProblem,
} from "./messagesTaskSpec.ts";

const args = [1, taskRef("a"), { x: [taskRef("b"), "c"], y: { z: taskRef("c") } }, "d"];

describe("task references in arguments", () => {
  it("are found at any depth in arrays and plain objects", () => {
    expect([...collectTaskRefs(args, new Set())].sort()).toEqual(["a", "b", "c"]);
  });

  it("taskArgsProblem names the first one not declared, in argument order", () => {
    const undeclared = (key: string) =>
      `refers to '${key}' in its arguments but does not list it as a dependency`;
    expect(taskArgsProblem(args, ["a", "b", "c"])).toBeNull();
    expect(taskArgsProblem(args, ["a"])).toBe(undeclared("b"));
    expect(taskArgsProblem(args, ["b", "c"])).toBe(undeclared("a"));
    expect(taskArgsProblem(args, ["a", "b"])).toBe(undeclared("c"));
    expect(taskArgsProblem([1, "a", null, { a: "a" }], [])).toBeNull();
  });

  it("taskArgsProblem checks many references against many dependencies in linear time", () => {
    const keys = Array.from({ length: 50_000 }, (_, i) => `k${i}`);
    const many = keys.map((k) => taskRef(k));
    expect(taskArgsProblem(many, keys)).toBeNull();
    expect(taskArgsProblem([...many, taskRef("zz")], keys)).toBe(
      "refers to 'zz' in its arguments but does not list it as a dependency",
    );
  });

  it("are not searched for in other objects: a large typed array is one value, not its elements", () => {
    // 256 MiB (zero pages, never touched): searched element by element, it took seconds and
    // then threw "Invalid array length", which failed the scheduler it reached.
    const started = performance.now();
    expect(taskArgsProblem([new Uint8Array(2 ** 28), { x: [taskRef("a")] }], ["a"])).toBeNull();
    expect(performance.now() - started).toBeLessThan(1000);
    // As the worker substitutes them (resolveArgs): only in arrays and plain objects.
    class Holder {
      ref = taskRef("zz");
    }
    expect(collectTaskRefs([new Holder(), new Map([[1, taskRef("m")]])], new Set()).size).toBe(0);
    expect(taskArgsProblem([new Holder()], [])).toBeNull();
  });

  it("taskArgsProblem refuses arguments nested deeper than MAX_ARG_DEPTH", () => {
    const nest = (n: number): unknown => {
      let v: unknown = taskRef("a");
      for (let i = 0; i < n; i++) v = i % 2 === 0 ? [v] : { v };
      return v;
    };
    // The argument array itself is one level.
    expect(taskArgsProblem([nest(MAX_ARG_DEPTH - 1)], ["a"])).toBeNull();
    expect(taskArgsProblem([nest(MAX_ARG_DEPTH)], ["a"])).toBe(
      `has arguments nested deeper than ${MAX_ARG_DEPTH} arrays, objects, Maps or Sets`,
    );
    // Maps and Sets count too (the wire nests them all the same), though no reference
    // inside them is one.
    let deep: unknown = 1;
    for (let i = 0; i < 2100; i++) deep = i % 2 === 0 ? new Map([["k", deep]]) : new Set([deep]);
    expect(taskArgsProblem([deep], [])).toBe(
      `has arguments nested deeper than ${MAX_ARG_DEPTH} arrays, objects, Maps or Sets`,
    );
    expect(taskArgsProblem([new Map([[taskRef("x"), new Set([taskRef("y")])]])], [])).toBeNull();
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
