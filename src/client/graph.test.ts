import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { taskRef } from "../protocol/messagesTaskSpec.ts";
import { ThrowingMap } from "../util/testRiggedCollections.ts";
import { Future } from "./future.ts";
import { buildGraph, isTaskEntry, literal, tasksToRun } from "./graph.ts";
import { standInFutureHost } from "./testFutureHost.ts";

const owner = {};

describe("buildGraph", () => {
  it("lists each task's dependencies once, in the order its arguments name them", () => {
    const built = buildGraph(
      { a: ["inc", 1], b: ["inc", 2], c: ["add", "b", "a", ["b", { x: "a" }]] },
      owner,
    );
    expect(built.tasks.get("c")?.dependencies).toEqual(["b", "a"]);
    expect(built.tasks.get("a")?.dependencies).toEqual([]);
    expect(built.sinks).toEqual(["c"]);
  });

  it("keeps them exact for a task with many repeated dependencies", () => {
    const graph: Record<string, unknown> = {};
    const keys = Array.from({ length: 100 }, (_, i) => `x-${i}`);
    for (const k of keys) graph[k] = ["inc", 1];
    graph.total = ["sum", [...keys, ...keys.slice().reverse(), ...keys]];
    graph.after = ["inc", "x-3"];
    const built = buildGraph(graph, owner);
    expect(built.tasks.get("total")?.dependencies).toEqual(keys);
    expect(built.tasks.get("after")?.dependencies).toEqual(["x-3"]);
  });

  it("inlines literals and does not count them as dependencies", () => {
    const built = buildGraph({ n: literal(5), s: 7, t: ["add", "n", "s"] }, owner);
    expect(built.tasks.get("t")).toMatchObject({
      spec: { fn: "add", args: [5, 7] },
      dependencies: [],
    });
    expect([...built.literals.keys()]).toEqual(["n", "s"]);
  });

  it("inlines a null or undefined literal as itself, not as its key's name", () => {
    const built = buildGraph(
      { a: null, u: undefined, z: "a", b: ["show", "a", ["a", 1], "u", "z", { r: taskRef("a") }] },
      owner,
    );
    expect(built.tasks.get("b")).toMatchObject({
      spec: { fn: "show", args: [null, [null, 1], undefined, null, { r: null }] },
      dependencies: [],
    });
  });

  it("reads a value that is another key as an alias, as Dask does; literal() keeps a string", () => {
    const built = buildGraph(
      {
        x: ["inc", 1],
        y: "x", // an alias of a task
        z: "y", // of an alias
        five: 5,
        v: "five", // of a literal: that literal
        s: literal("x"), // a string
        t: "not a key", // a string too
        u: ["add", "z", "v"],
        w: "u",
      },
      owner,
    );
    expect([...built.aliases]).toEqual([
      ["y", "x"],
      ["z", "x"],
      ["w", "u"],
    ]);
    expect(built.tasks.get("u")).toMatchObject({
      spec: { fn: "add", args: [{ __weftRef: "x" }, 5] },
      dependencies: ["x"],
    });
    expect(built.literals.get("v")).toBe(5);
    expect(built.literals.get("s")).toBe("x");
    expect(built.literals.get("t")).toBe("not a key");
    // Used by an alias or a task: not wanted by default; the last alias is.
    expect(built.unusedKeys).toEqual(["s", "t", "w"]);
    expect(built.sinks).toEqual(["w"]);
    expect(buildGraph({ x: ["inc", 1], y: "x" }, owner).sinks).toEqual(["y"]);
  });

  it("refuses a cycle of aliases, naming it", () => {
    expect(() => buildGraph({ a: "b", b: "c", c: "a", d: ["inc", "a"] }, owner)).toThrow(
      /^compute: the graph has a cycle: a → b → c → a$/,
    );
    expect(() => buildGraph({ a: "a" }, owner)).toThrow(/the graph has a cycle: a → a$/);
    // An alias leading into a cycle is no part of it.
    expect(() => buildGraph({ x: "a", a: "b", b: "a" }, owner)).toThrow(
      /^compute: the graph has a cycle: a → b → a$/,
    );
  });

  it("names an argument that holds a reference cycle, and stays usable after", () => {
    const cyclic: unknown[] = [1];
    cyclic.push(cyclic);
    expect(() => buildGraph({ a: ["f", cyclic] }, owner)).toThrow(
      /graph key "a": .* contains a reference cycle/,
    );
    const shared = [1, 2];
    const built = buildGraph({ a: ["f", shared, shared], b: ["f", [shared, [shared]]] }, owner);
    expect(built.tasks.get("b")?.spec.args).toEqual([[shared, [shared]]]);
  });

  it("reads a Map graph's entries with the built-in iteration, not one of its own", () => {
    const entries: [string, unknown][] = [
      ["n", literal(5)],
      ["a", ["inc", "n"]],
    ];
    const built = buildGraph(new ThrowingMap(entries), owner);
    expect([...built.tasks]).toEqual([...buildGraph(new Map(entries), owner).tasks]);
  });

  it("refuses an object inheriting a Map's methods without being one, which holds no tasks", () => {
    expect(() => buildGraph(Object.create(Map.prototype), owner)).toThrow(
      /the graph must be an object \{key: \[fn, \.\.\.args\]\} or a Map of key to task/,
    );
  });

  it("refuses a promise or a Set, whose entries are no keys: it computed an empty graph", () => {
    expect(() => buildGraph(Promise.resolve({ a: ["inc", 1] }) as never, owner, {}, "get")).toThrow(
      new TypeError("get: the graph is a promise: await it, and give what it resolves to"),
    );
    expect(() => buildGraph(new Set(["a"]) as never, owner)).toThrow(
      /^compute: the graph must be an object \{key: \[fn, \.\.\.args\]\} or a Map of key to task, got a Set$/,
    );
  });

  it("takes a Map as it takes an object", () => {
    const entries: [string, unknown][] = [
      ["n", literal(5)],
      ["a", ["inc", "n"]],
      ["b", ["add", "a", "n", ["a"]]],
    ];
    const fromMap = buildGraph(new Map(entries), owner);
    const fromObject = buildGraph(Object.fromEntries(entries), owner);
    expect([...fromMap.tasks]).toEqual([...fromObject.tasks]);
    expect(fromMap.tasks.get("b")).toMatchObject({
      spec: { fn: "add", args: [{ __weftRef: "a" }, 5, [{ __weftRef: "a" }]] },
      dependencies: ["a"],
    });
    expect(fromMap.sinks).toEqual(["b"]);
  });

  it("names a long cycle in a message of a few keys, not all of them", () => {
    const graph: Record<string, unknown> = { x0: ["inc", "x4999"] };
    for (let i = 1; i < 5000; i++) graph[`x${i}`] = ["inc", `x${i - 1}`];
    expect(() => buildGraph(graph, owner).sinks).toThrow(
      new TypeError(
        "compute: the graph has a cycle: x4999 → x4998 → x4997 → x4996 → x4995 → x4994 → x4993 → x4992 → … (4,991 more) … → x0 → x4999",
      ),
    );
    const short = { a: ["inc", "b"], b: ["inc", "a"] };
    expect(() => buildGraph(short, owner).sinks).toThrow(
      "compute: the graph has a cycle: b → a → b",
    );
    // Beside tasks that are needed, which are no part of it.
    const beside = { a: ["inc", 1], b: ["inc", "a"], c: ["inc", "d"], d: ["inc", "c"] };
    expect(() => buildGraph(beside, owner).sinks).toThrow(
      "compute: the graph has a cycle: d → c → d",
    );
  });

  it("refuses a Map key that is not a string, naming it", () => {
    const graph = new Map<unknown, unknown>([[7, ["inc", 1]]]);
    expect(() => buildGraph(graph as unknown as Map<string, unknown>, owner)).toThrow(
      "compute: graph key 7 must be a string",
    );
  });

  it("copies the options shared by its tasks onto every one of them, and nothing when none", () => {
    const built = buildGraph({ a: ["inc", 1], b: ["inc", "a"] }, owner, {
      retries: 2,
      priority: 5,
      resources: { GPU: 1 },
      workers: "tcp://10.0.0.1:4000",
      allowOtherWorkers: true,
    });
    for (const key of ["a", "b"]) {
      expect(built.tasks.get(key)).toMatchObject({
        retries: 2,
        priority: 5,
        resources: { GPU: 1 },
        workers: ["tcp://10.0.0.1:4000"],
        allowOtherWorkers: true,
      });
    }
    expect(buildGraph({ a: ["inc", 1] }, owner).tasks.get("a")).toEqual({
      spec: { fn: "inc", args: [1] },
      dependencies: [],
    });
  });

  it("refuses options or a graph that is an array, naming the method", () => {
    expect(() => buildGraph({ a: ["inc", 1] }, owner, [] as never, "get")).toThrow(
      new TypeError("get: options must be an object, got []"),
    );
    expect(() => buildGraph([["inc", 1]] as never, owner)).toThrow(
      /^compute: the graph must be an object \{key: \[fn, \.\.\.args\]\} or a Map of key to task, got \[/,
    );
  });

  it("reads an array starting with an empty string as a literal, not a task", () => {
    expect(isTaskEntry(["", 1])).toBe(false);
    const built = buildGraph({ a: ["", 1], b: ["identity", "a"] }, owner);
    expect(built.literals.get("a")).toEqual(["", 1]);
    expect(built.tasks.get("b")?.spec.args).toEqual([["", 1]]);
  });

  it("makes a future among the arguments a task reference and a dependency", () => {
    const host = standInFutureHost();
    const f = new Future(host, "outside-1");
    const built = buildGraph({ a: ["add", f, { x: [f] }], b: ["inc", "a"] }, host);
    expect(built.tasks.get("a")).toEqual({
      spec: { fn: "add", args: [taskRef("outside-1"), { x: [taskRef("outside-1")] }] },
      dependencies: ["outside-1"],
    });
    expect(built.sinks).toEqual(["b"]);
  });
});

describe("tasksToRun", () => {
  it("runs, for an alias, the task it stands for and what that needs", () => {
    const graph = { x: ["inc", 1], y: "x", z: ["inc", "y"], other: ["inc", 2] };
    expect(tasksToRun(graph, ["y"]).map((t) => t.spec)).toEqual([{ fn: "inc", args: [1] }]);
    expect(tasksToRun(graph, ["z"]).map((t) => t.spec)).toEqual([
      { fn: "inc", args: [1] },
      { fn: "inc", args: [taskRef("x")] },
    ]);
  });
});

describe("tasksToRun and cycles", () => {
  it("names a cycle that a task needs, which buildGraph leaves to the scheduler", () => {
    const graph = { a: ["inc", "b"], b: ["inc", "a"], c: ["inc", "a"] };
    expect(() => buildGraph(graph, {})).not.toThrow();
    expect(() => tasksToRun(graph)).toThrow(/^compute: the graph has a cycle: a → b → a$/);
    expect(() => tasksToRun(graph, ["c"])).toThrow(/^compute: the graph has a cycle: a → b → a$/);
    // Not one that the wanted keys do not need.
    const beside = { ...graph, d: ["inc", 1] };
    expect(tasksToRun(beside, ["d"]).map((t) => t.spec)).toEqual([{ fn: "inc", args: [1] }]);
  });

  it("passes a diamond, and walks a chain of 30,000 without a stack overflow", () => {
    const diamond = { x: ["inc", 1], y: ["inc", "x"], z: ["inc", "x"], w: ["add", "y", "z"] };
    expect(tasksToRun(diamond)).toHaveLength(4);
    const chain: Record<string, unknown> = { x0: ["inc", 1] };
    for (let i = 1; i < 30_000; i++) chain[`x${i}`] = ["inc", `x${i - 1}`];
    expect(tasksToRun(chain, ["x29999"])).toHaveLength(30_000);
    chain.x0 = ["inc", "x29999"];
    chain.top = ["inc", "x5"];
    expect(() => tasksToRun(chain, ["top"])).toThrow(
      /^compute: the graph has a cycle: x5 → x4 → x3 → .* → x6 → x5$/,
    );
  });
});

describe("buildGraph, against Dask's reading of a graph", () => {
  /**
   * Dask's `get` of `key`: a task `[fn, ...args]` applies `fn` to its
   * arguments, an argument (or a whole value) that is a key stands for that
   * key's value, anything else is itself.
   */
  function daskValue(graph: Record<string, unknown>, key: string): unknown {
    const v = graph[key];
    const arg = (a: unknown): unknown =>
      typeof a === "string" && Object.hasOwn(graph, a) ? daskValue(graph, a) : a;
    if (Array.isArray(v) && v[0] === "add") return (arg(v[1]) as number) + (arg(v[2]) as number);
    return arg(v);
  }

  /** The value of `key` as the built graph computes it: tasks run on their specs, aliases followed. */
  function builtValue(built: ReturnType<typeof buildGraph>, key: string): unknown {
    if (built.literals.has(key)) return built.literals.get(key);
    const task = built.tasks.get(built.aliases.get(key) ?? key);
    if (task === undefined) throw new Error(`no task ${key}`);
    const arg = (a: unknown): unknown =>
      typeof a === "object" && a !== null && "__weftRef" in a
        ? builtValue(built, (a as { __weftRef: string }).__weftRef)
        : a;
    const [x, y] = task.spec.args;
    return (arg(x) as number) + (arg(y) as number);
  }

  it("every key has the value Dask would give it; only keys nothing uses are wanted by default", () => {
    // Key i may name only keys before it: no cycles.
    const entry = (i: number) => {
      const earlier = i === 0 ? fc.constant(0) : fc.nat(i - 1).map((j) => `k${j}`);
      // null too: a literal null once came out as its key's name.
      const literalValue = fc.oneof(fc.integer({ min: -9, max: 9 }), fc.constant(null));
      const operand = fc.oneof(literalValue, earlier);
      return fc.oneof(
        fc.tuple(fc.constant("add"), operand, operand),
        literalValue,
        earlier, // an alias, once i > 0
      );
    };
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 12 })
          .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => entry(i)))),
        (entries) => {
          const graph: Record<string, unknown> = {};
          entries.forEach((v, i) => {
            graph[`k${i}`] = v;
          });
          const built = buildGraph(graph, owner);
          for (const key of Object.keys(graph)) {
            expect(builtValue(built, key)).toBe(daskValue(graph, key));
          }
          const named = new Set<string>();
          for (const v of Object.values(graph)) {
            const refs = Array.isArray(v) ? v.slice(1) : [v];
            for (const r of refs) if (typeof r === "string") named.add(r);
          }
          expect(built.unusedKeys).toEqual(Object.keys(graph).filter((k) => !named.has(k)));
        },
      ),
      { numRuns: 300 },
    );
  });
});
