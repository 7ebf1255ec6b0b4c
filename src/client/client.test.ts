import { inspect } from "node:util";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import type { Comm } from "../comm/comm.ts";
import { listen } from "../comm/connect.ts";
import { taskRef } from "../protocol/messagesTaskSpec.ts";
import { WIRE_PROTOCOL_VERSION, weftVersion, wireVersion } from "../protocol/version.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import { Client } from "./client.ts";
import { ClientClosedError } from "./errors.ts";
import { Future } from "./future.ts";
import { literal } from "./graph.ts";
import { closeTestClusters, eventually, knownKeys, testCluster } from "./testCluster.ts";
import { add, bytes, double, inc, manhattan, slowInc, sum } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("Client", () => {
  it("refuses bad connection options before connecting, naming the option", async () => {
    await expect(Client.connect("inproc://nowhere", { timeoutMs: -1 })).rejects.toThrow(
      /^Client option timeoutMs must be a number > 0 and at most 2147483647 \(about 24.8 days\), got -1$/,
    );
    // Longer than a Node.js timer waits: it would time out at once.
    await expect(Client.connect("inproc://nowhere", { timeoutMs: 1e10 })).rejects.toThrow(
      /^Client option timeoutMs must be .* got 10000000000$/,
    );
    await expect(Client.connect("inproc://nowhere", { maxFrameBytes: 1.5 })).rejects.toThrow(
      /^Client option maxFrameBytes must be an integer from 1 to 2147483647, got 1.5$/,
    );
  });

  it("console.log shows a client by its id and scheduler, not its internals", async () => {
    const { cluster, client } = await testCluster();
    expect(inspect(client)).toBe(`<Client ${client.id} of ${cluster.address}>`);
    await client.close();
    expect(inspect({ client })).toBe(
      `{ client: <Client ${client.id} of ${cluster.address}, closed> }`,
    );
  });

  it("submits a task and awaits its future", async () => {
    const { client } = await testCluster();
    const x = client.submit(inc, 1);
    expect(x).toBeInstanceOf(Future);
    expect(x.key).toMatch(/^inc-[0-9a-f]{32}$/);
    expect(x.status).toBe("pending");
    expect(await x).toBe(2);
    expect(x.status).toBe("finished");
    expect(x.done).toBe(true);
    expect(x.typename).toBe("number");
    expect(await x.result()).toBe(2); // each await fetches again
    expect(await client.gather(x)).toBe(2); // one future: its result
  });

  it("passes futures as arguments, at any depth", async () => {
    const { client } = await testCluster();
    const x = client.submit(inc, 1);
    const y = client.submit(add, x, 10);
    const z = client.submit(sum, [x, y, 100]);
    expect(await z).toBe(2 + 12 + 100);
    const w = client.submit("identity", { nested: [x, { y }] });
    expect(await w).toEqual({ nested: [2, { y: 12 }] });
  });

  it("takes futures inside an argument typed with an interface", async () => {
    const { client } = await testCluster();
    expect(await client.submit(manhattan, { x: client.submit(inc, 1), y: -3 })).toBe(5);
    // gather takes (and types) an object typed with an interface as the plain object it is.
    interface Inputs {
      one: Future<number>;
      more: { two: Future<number> };
      when: Date;
    }
    const inputs: Inputs = {
      one: client.submit(inc, 0),
      more: { two: client.submit(inc, 1) },
      when: new Date(0),
    };
    const got = await client.gather(inputs);
    const two: number = got.more.two;
    expect([got.one, two, got.when]).toEqual([1, 2, new Date(0)]);
    // Types still checked inside: not called, only compiled.
    const _wrong = () =>
      // @ts-expect-error x must be a number or a future of one
      client.submit(manhattan, { x: "one", y: client.submit(inc, 1) });
    void _wrong;
  });

  it("takes arguments and graph literals as they are at the call", async () => {
    const { client } = await testCluster();
    const batch = [1, 2, 3];
    const nested = { xs: [10], when: new Date(0), m: new Map([["k", [1]]]) };
    const buf = Float64Array.from([1, 2]);
    const fs = [
      client.submit(sum, batch),
      client.submit("identity", nested),
      client.submit("identity", buf),
    ];
    const literalValue = { n: [5] };
    const got = client.get({ lit: literalValue, out: ["identity", "lit"] });
    // A caller reusing its values right after submitting (a batch cleared, a buffer refilled).
    batch.length = 0;
    nested.xs.push(11);
    nested.when.setTime(1);
    nested.m.get("k")?.push(2);
    buf.fill(0);
    literalValue.n.push(6);
    expect(await client.gather(fs)).toEqual([
      6,
      { xs: [10], when: new Date(0), m: new Map([["k", [1]]]) },
      Float64Array.from([1, 2]),
    ]);
    expect(await got).toEqual({ out: { n: [5] } });
    // The key (hashed from the value at the call) and the result agree.
    expect(await client.submit(sum, [1, 2, 3])).toBe(6);
  });

  it("maps over an iterable and gathers arrays and records", async () => {
    const { client } = await testCluster();
    const futures = client.map(double, [1, 2, 3, 4]);
    expect(await client.gather(futures)).toEqual([2, 4, 6, 8]);
    // Each item is the one argument: a function of two does not type-check (not run).
    // @ts-expect-error add needs two arguments; map calls it with one
    const _wrongArity = () => client.map(add, [1, 2]);
    void _wrongArity;
    expect(await client.gather({ a: futures[0], b: futures[3] })).toEqual({ a: 2, b: 8 });
    // Nested arrays and plain objects are searched, as Dask's gather does.
    const nested = await client.gather([
      futures[0],
      [futures[1], { x: futures[2], n: 5 }],
    ] as const);
    expect(nested).toEqual([2, [4, { x: 6, n: 5 }]]);
    const typed: number = nested[1][1].x;
    expect(typed).toBe(6);
    expect(await client.gather({ a: [futures[0], futures[0]] })).toEqual({ a: [2, 2] });
    const own = await client.gather(JSON.parse('{"__proto__": {"x": 1}, "a": 0}'));
    expect(Object.keys(own)).toEqual(["__proto__", "a"]);
    expect((own as { x?: number }).x).toBeUndefined();
    await expect(client.gather(new Map([["a", futures[0]]]) as never)).rejects.toThrow(
      /gather: expected a future, or an array or plain object holding futures, got a Map/,
    );
    await expect(client.gather([new Set([futures[0]])])).rejects.toThrow(
      /a future inside a Set is not searched for/,
    );
    // However deep inside a Map: refused, not returned unresolved.
    await expect(client.gather([new Map([["a", [{ f: futures[0] }]]])])).rejects.toThrow(
      /a future inside a Map is not searched for/,
    );
    const data = new Map<string, unknown>([["n", [1, 2]]]);
    data.set("self", data); // a cycle inside data is data
    const [kept] = await client.gather([data]);
    expect(kept).toBe(data);
    let deep: unknown = futures[0];
    for (let i = 0; i < 20_000; i++) deep = [deep];
    await expect(client.gather([deep])).rejects.toThrow(/nests deeper than 1000 levels/);
    expect(await Promise.all(futures)).toEqual([2, 4, 6, 8]);
  });

  it("gives the same key to the same pure call, and fresh keys otherwise", async () => {
    const { cluster, client } = await testCluster();
    // Fresh keys differ from client to client too: each made its first here.
    const other = await cluster.client();
    const mine = client.submitWith({ pure: false }, inc, 1);
    const theirs = other.submitWith({ pure: false }, inc, 1);
    expect(mine.key).not.toBe(theirs.key);
    await other.close();
    expect(await mine).toBe(2);
    expect(client.submit(inc, 5).key).toBe(client.submit(inc, 5).key);
    expect(client.submit(inc, 5).key).not.toBe(client.submit(inc, 6).key);
    const a = client.submitWith({ pure: false }, inc, 5);
    const b = client.submitWith({ pure: false }, inc, 5);
    expect(a.key).not.toBe(b.key);
    const named = client.submitWith({ key: "my-key" }, inc, 5);
    expect(named.key).toBe("my-key");
    expect(await client.gather([a, b, named])).toEqual([6, 6, 6]);
  });

  it("computes a Dask-style graph: key references, nested arrays, refs in objects, literals", async () => {
    const { client } = await testCluster();
    const result = await client.get({
      one: 1,
      pair: literal(["not", "a task"]),
      x: ["inc", "one"],
      y: [inc, "x"],
      z: ["add", "x", "y"],
      total: ["sum", ["x", "y", "z", 1000]],
      obj: ["identity", { ref: taskRef("z"), plain: "x", pair: taskRef("pair") }],
    });
    expect(result).toEqual({
      total: 2 + 3 + 5 + 1000,
      obj: { ref: 5, plain: "x", pair: ["not", "a task"] },
    });
  });

  it("computes a graph given as a Map", async () => {
    const { client } = await testCluster();
    const graph = new Map<string, unknown>([
      ["one", 1],
      ["x", ["inc", "one"]],
      ["y", ["add", "x", "one"]],
    ]);
    expect(await client.get(graph)).toEqual({ y: 3 });
    expect(await client.get(graph, { keys: ["one", "x"] })).toEqual({ one: 1, x: 2 });
  });

  it("compute() returns futures of the wanted keys; get() returns literals too", async () => {
    const { client } = await testCluster();
    const graph = { a: ["inc", 1], b: ["double", "a"], c: 7 };
    const futures = client.compute(graph);
    expect(Object.keys(futures)).toEqual(["b"]);
    expect(await futures.b).toBe(4);
    const both = client.compute(graph, { keys: ["a", "b"] });
    expect(await client.gather(both)).toEqual({ a: 2, b: 4 });
    expect(await client.get(graph, { keys: ["c", "a"] })).toEqual({ c: 7, a: 2 });
    // Any iterable, as map's items.
    expect(await client.get(graph, { keys: new Set(["a"]) })).toEqual({ a: 2 });
    expect(() => client.compute(graph, { keys: ["c"] })).toThrow(/literal/);
    expect(() => client.compute(graph, { keys: ["nope"] })).toThrow(/no key "nope"/);
    // A key of another type is named, not lost in a TypeError from formatting it.
    expect(() => client.compute(graph, { keys: [7n as never] })).toThrow(/no key "7n"/);
    // By default get() returns the literals no task uses too, in graph order.
    expect(Object.entries(await client.get(graph))).toEqual([
      ["b", 4],
      ["c", 7],
    ]);
    expect(await client.get({ a: 5 })).toEqual({ a: 5 });
    expect(() => client.compute({ "": ["inc", 1] })).toThrow(
      /a graph key must be a non-empty string/,
    );
    expect(await client.get({ a: [] })).toEqual({ a: [] });
  });

  it("get() gives each key its own value, whatever order an object lists its keys in", async () => {
    const { client } = await testCluster();
    // An object lists integer-like keys first, in numeric order: not the order wanted.
    const graph = { b: ["inc", 1], "1": ["inc", 10], "10": ["inc", 100], "2": ["inc", 20] };
    expect(await client.get(graph, { keys: ["b", "1"] })).toEqual({ b: 2, "1": 11 });
    expect(await client.get(graph, { keys: ["10", "2", "b"] })).toEqual({
      "10": 101,
      "2": 21,
      b: 2,
    });
    const map = new Map<string, unknown>([
      ["10", ["inc", 100]],
      ["2", ["inc", 20]],
    ]);
    expect(await client.get(map)).toEqual({ "10": 101, "2": 21 });
  });

  it("an alias (a key whose value is another key) stands for that key's result, as in Dask", async () => {
    const { cluster, client } = await testCluster();
    const graph = { a: ["inc", 1], b: "a", c: ["double", "b"], d: "c", e: 5, f: "e" };
    expect(await client.get(graph)).toEqual({ d: 4, f: 5 });
    expect(await client.get(graph, { keys: ["b", "a", "f"] })).toEqual({ b: 2, a: 2, f: 5 });
    // Its future is the future of the task it stands for.
    const futures = client.compute(graph, { keys: ["b", "d"] });
    expect(futures.b.key).toBe("a");
    expect(futures.d.key).toBe("c");
    expect(await client.gather(futures)).toEqual({ b: 2, d: 4 });
    expect(() => client.compute(graph, { keys: ["f"] })).toThrow(/"f" is a literal/);
    for (const f of Object.values(futures)) f.release();
    await eventually(() => knownKeys(cluster).scheduler.length === 0);
  });

  it("a key named twice is computed and returned once, and everything is released", async () => {
    const { cluster, client } = await testCluster();
    const graph = { a: ["inc", 1], b: ["double", "a"] };
    expect(await client.get(graph, { keys: ["a", "a"] })).toEqual({ a: 2 });
    expect(await client.get(graph, { keys: ["a", "b", "a"] })).toEqual({ a: 2, b: 4 });
    const held = client.compute(graph, { keys: ["b", "b"] });
    expect(Object.keys(held)).toEqual(["b"]);
    expect(await held.b).toBe(4);
    held.b.release();
    await eventually(() => knownKeys(cluster).scheduler.length === 0);
  });

  it("refuses a graph whose cycle no sink needs, naming the cycle", async () => {
    const { client } = await testCluster();
    expect(() => client.compute({ a: ["inc", "a"] })).toThrow(
      "compute: the graph has a cycle: a → a",
    );
    // Beside an independent task, and behind a task the cycle feeds.
    const graph = { a: ["inc", "b"], b: ["add", "a", "d"], c: ["inc", 1], d: ["inc", 2] };
    await expect(client.get(graph)).rejects.toThrow(/cycle: (a → b → a|b → a → b)/);
    expect(await client.get({ ...graph, a: ["inc", 1] })).toEqual({ b: 5, c: 2 });
  });

  it("refuses bad task options at the call, for submit and compute alike", async () => {
    const { client } = await testCluster();
    expect(() => client.submitWith({ retries: -1 }, inc, 1)).toThrow(
      /retries must be an integer >= 0/,
    );
    expect(() => client.submitWith({ priority: Number.NaN }, inc, 3)).toThrow(
      /priority must be a finite number, got NaN/,
    );
    expect(() => client.compute({ a: ["inc", 1] }, { retries: -3 })).toThrow(
      /compute: retries must be an integer >= 0, got -3/,
    );
    expect(() => client.compute({ a: ["inc", 1] }, { resources: { GPU: -1 } })).toThrow(
      /compute: resources resource 'GPU' must be a finite number ≥ 0, got -1/,
    );
    // Nothing reached the scheduler: the pure key computes with good options.
    expect(await client.submitWith({ priority: 1 }, inc, 3)).toBe(4);
  });

  it("refuses arguments that cannot travel as data", async () => {
    const { client } = await testCluster();
    expect(() => client.submit("identity", () => 1)).toThrow(/args\[0\] is a function/);
    // Instances of other classes would arrive differently by each path.
    expect(() => client.submit("identity", { u: new URL("http://a/b") })).toThrow(
      /args\[0\]\.u is a URL; task arguments must be data/,
    );
    class Point {
      constructor(readonly x: number) {}
    }
    expect(() => client.submit("identity", [new Point(1)])).toThrow(/args\[0\]\[0\] is a Point/);
    // The members of a Map or Set follow the same rules.
    expect(() => client.submit("identity", new Map([["u", new URL("http://a/b")]]))).toThrow(
      /args\[0\]\.<value 0> is a URL/,
    );
    expect(() => client.submit("identity", new Set(["a\ud800"]))).toThrow(
      /args\[0\]\.<member 0> is not well-formed Unicode/,
    );
    // A graph's function names too, as submit's.
    expect(() => client.compute({ a: ["\ud800", 1] })).toThrow(
      /graph key "a": the function name is not well-formed Unicode/,
    );
    const f = client.submit(inc, 1);
    expect(() => client.submit("identity", new Map([["k", f]]))).toThrow(
      /args\[0\]\.<value 0> is a future inside a Map or Set/,
    );
    // A string naming a graph key inside a Map is data, not a reference.
    expect(await client.get({ a: 7, b: ["identity", new Map([["x", ["a"]]])] })).toEqual({
      a: 7,
      b: new Map([["x", ["a"]]]),
    });
    // Data objects pass; plain objects also from another realm (a vm context), whose
    // data classes the wire would not recognise (a Map would travel as {}).
    const data = [new Map([[1, 2]]), new Set([1]), new Date(0), /x/g, new Uint8Array(2)];
    expect(await client.submit("identity", data)).toEqual(data);
    const foreign = runInNewContext("({ o: { a: 1 }, n: [{ b: 2 }] })");
    expect(await client.submit("identity", foreign)).toEqual({ o: { a: 1 }, n: [{ b: 2 }] });
    expect(() => client.submit("identity", runInNewContext("new Map([[1, 2]])"))).toThrow(
      /args\[0\] is a Map made in another realm/,
    );
    class Rootless extends (null as unknown as new () => object) {}
    expect(() => client.submit("identity", Object.create(Rootless.prototype))).toThrow(
      /args\[0\] is a Rootless/,
    );
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => client.submit("identity", cyclic)).toThrow(/reference cycle/);
    await expect(client.get({ a: ["identity", { f: Symbol("s") }] })).rejects.toThrow(
      /is a symbol/,
    );
    let deep: unknown = 1;
    for (let i = 0; i < 5000; i++) deep = [deep];
    expect(() => client.submit("identity", deep)).toThrow(/nested deeper than 1000/);
    expect(() => client.compute({ a: ["identity", "b"], b: deep })).toThrow(
      /nested deeper than 1000/,
    );
    // Literals are inlined into the tasks naming them: the same rules, and no references.
    const literalCycle: unknown[] = [];
    literalCycle.push(literalCycle);
    expect(() => client.compute({ a: ["identity", "b"], b: literalCycle })).toThrow(
      /the literal at graph key "b"\[0\] contains a reference cycle/,
    );
    expect(() => client.compute({ a: ["identity", "b"], b: { f: () => 1 } })).toThrow(
      /the literal at graph key "b"\.f is a function/,
    );
    const future = client.submit("identity", 1);
    expect(() => client.compute({ a: ["identity", "b"], b: { x: [future] } })).toThrow(
      /the literal at graph key "b"\.x\[0\] is a future; literals are values/,
    );
    expect(() => client.compute({ a: ["identity", "b"], b: literal([taskRef("a")]) })).toThrow(
      /the literal at graph key "b"\[0\] is a task reference/,
    );
    expect(await future).toBe(1);
    const plain = (() => 1) as unknown as string; // a plain function, as JavaScript callers may pass
    expect(() => client.submit(plain)).toThrow(/register it with defineTask/);
    // Described, not JSON.stringify'd (a future's client has cycles; bigints throw).
    expect(() => client.submit(future as never, 1)).toThrow(
      new RegExp(`got a future \\(of "${future.key}"\\), not a function`),
    );
    expect(() => client.map(5n as never, [1])).toThrow(/map: the function .*, got bigint 5$/);
    expect(() => client.submit(new Map() as never)).toThrow(/got a Map$/);
  });

  it("refuses strings that are not well-formed Unicode (they would not survive UTF-8)", async () => {
    const { client } = await testCluster();
    const lone = "x\uD800";
    const bad = /not well-formed Unicode/;
    expect(() => client.submit("identity", lone)).toThrow(/args\[0\] is not well-formed/);
    expect(() => client.submit("identity", { [lone]: 1 })).toThrow(/a key of args\[0\]/);
    expect(() => client.map("identity", [[lone]])).toThrow(bad);
    expect(() => client.submitWith({ key: lone }, "identity", 1)).toThrow(bad);
    expect(() => client.submitWith({ key: 5 as never }, "identity", 1)).toThrow(
      /key must be a non-empty string/,
    );
    expect(() => client.submitWith({ key: 5n as never }, "identity", 1)).toThrow(
      'key must be a non-empty string, got "5n"',
    );
    expect(() => client.compute({ [lone]: ["inc", 1] })).toThrow(/graph key/);
    expect(() => client.compute({ a: ["identity", "b"], b: { deep: [lone] } })).toThrow(
      /literal at graph key "b"\.deep\[0\] is not well-formed/,
    );
    expect(() => client.compute({ a: ["identity", [lone]] })).toThrow(bad);
    expect(() => client.submit(lone)).toThrow(/function name is not well-formed/);
    // The wire codec renames `__proto__` keys (prototype pollution guard).
    const proto = JSON.parse('{"__proto__": 1}');
    expect(() => client.submit("identity", proto)).toThrow(/a key of args\[0\] is __proto__/);
    expect(() => client.compute(JSON.parse('{"__proto__": ["inc", 1]}'))).toThrow(/__proto__/);
    expect(() => client.submitWith({ key: "__proto__" }, "identity", 1)).toThrow(/__proto__/);
    expect(await client.submit("identity", "__proto__")).toBe("__proto__"); // as a value: fine
    // Well-formed strings of any script (and surrogate pairs) are fine.
    expect(await client.submit("identity", "ζ😀")).toBe("ζ😀");
  });

  it("a future awaited and otherwise dropped is not released while its result is awaited", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const { client } = await testCluster();
    // `await client.submit(…)` keeps only the promise of the result; the
    // collector runs (and the finalizers after it) while the task computes.
    const waits = [1, 2, 3].map(
      async (x) => await client.submitWith({ pure: false }, "slowInc", x, 150),
    );
    for (let i = 0; i < 6; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(await Promise.all(waits)).toEqual([2, 3, 4]);
    // The same for gather of an array nobody else holds.
    const all = client.gather(
      [4, 5].map((x) => client.submitWith({ pure: false }, "slowInc", x, 150)),
    );
    for (let i = 0; i < 6; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(await all).toEqual([5, 6]);
  });

  it("releases results once no future holds them", async () => {
    const { cluster, client } = await testCluster();
    const x = client.submit(inc, 1);
    const y = client.submit(add, x, 1);
    const again = client.submit(inc, 1); // a second future of the same key
    expect(await y).toBe(3);
    x.release();
    y.release();
    await expect(y).rejects.toThrow(/released/);
    expect(await again).toBe(2); // still held by `again`
    again.release();
    await eventually(
      () => knownKeys(cluster).scheduler.length === 0,
      5_000,
      "the scheduler forgets",
    );
    await eventually(
      () => cluster.workers.every((w) => w.state.tasks.size === 0 && w.state.data.size === 0),
      5_000,
      "the workers free the data",
    );
    expect(client.keyCount).toBe(0);
  });

  it("an await under way when its future is released rejects saying so", async () => {
    const { client } = await testCluster();
    const f = client.submit(slowInc, 1, 200);
    const awaited = f.result();
    f.release();
    await expect(awaited).rejects.toThrow(
      new ClientClosedError(`the future of ${f.key} was released before its result came`),
    );
  });

  it("an await under way when its future is released still gets the result while another future holds the key, as in Dask", async () => {
    const { client } = await testCluster();
    const f = client.submit(slowInc, 1, 200);
    const other = client.submit(slowInc, 1, 200);
    expect(other.key).toBe(f.key);
    const awaited = f.result();
    f.release();
    expect(await awaited).toBe(2);
    await expect(f.result()).rejects.toThrow(
      new ClientClosedError(`the future of ${f.key} was released`),
    );
    other.release();
  });

  it("recomputes a key submitted again after it was released", async () => {
    const { client } = await testCluster();
    const a = client.submit(inc, 41);
    expect(await a).toBe(42);
    a.release();
    const b = client.submit(inc, 41);
    expect(await b).toBe(42);
  });

  it("reports the connected workers and the server's counters", async () => {
    const { cluster, client } = await testCluster();
    await client.gather(client.map(inc, [1, 2, 3]));
    const workers = await client.workers();
    expect(workers).toHaveLength(2);
    expect(workers[0]).toMatchObject({ nthreads: 1, status: "running" });
    const counters = await client.counters();
    expect(counters).toMatchObject({
      tasksFinished: 3,
      tasksErred: 0,
      tasksDone: 3,
      workers: 2,
      clients: 1,
    });
    // The workers' metrics, by JSON-encoded name.
    const names = cluster.workers.flatMap((w) => [...w.metrics.keys()].map((k) => JSON.parse(k)));
    expect(names).toContainEqual(["execute", null, "inc", "thread", "seconds"]);
  });

  it("says where results are held (whoHas) and what each worker holds (hasWhat)", async () => {
    const { cluster, client } = await testCluster();
    const [a, b] = cluster.workers.map((w) => w.address);
    const x = client.submitWith({ workers: a }, inc, 1);
    const y = client.submitWith({ workers: b }, inc, 2);
    await client.gather([x, y]);
    expect(await client.whoHas([x, y])).toEqual({ [x.key]: [a], [y.key]: [b] });
    expect(await client.whoHas(x)).toEqual({ [x.key]: [a] });
    expect(await client.whoHas([y.key, "unknown"])).toEqual({ [y.key]: [b], unknown: [] });
    expect(await client.whoHas()).toEqual({ [x.key]: [a], [y.key]: [b] });
    expect(await client.hasWhat()).toEqual({ [a]: [x.key], [b]: [y.key] });
    expect(await client.hasWhat([b, "inproc://nowhere/1"])).toEqual({
      [b]: [y.key],
      "inproc://nowhere/1": [],
    });
    await client.replicate(x);
    expect((await client.whoHas(x))[x.key]).toEqual([a, b]);
    expect((await client.hasWhat(b))[b]).toEqual([y.key, x.key]);
    await expect(client.whoHas([1 as never])).rejects.toThrow(
      "whoHas: expected futures of this client or keys, got 1",
    );
    await expect(client.whoHas("")).rejects.toThrow(
      'whoHas: expected futures of this client or keys, got ""',
    );
    await expect(client.whoHas(1 as never)).rejects.toThrow(
      "whoHas: expected futures or keys, got 1",
    );
    const other = await cluster.client();
    await expect(client.whoHas(other.submit(inc, 1))).rejects.toThrow(
      /^whoHas: expected futures of this client or keys, got /,
    );
    await expect(client.hasWhat([""])).rejects.toThrow(
      'hasWhat: expected worker addresses, got [""]',
    );
  });

  it("says what each worker is processing (processing) and its threads (nthreads)", async () => {
    const { cluster, client } = await testCluster({ threadsPerWorker: 2 });
    const [a, b] = cluster.workers.map((w) => w.address).sort();
    const slow = client.submitWith({ workers: a }, slowInc, 1, 800);
    const busy = async () => (await client.processing(a))[a];
    for (let i = 0; i < 100 && (await busy()).length === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await client.processing()).toEqual({ [a]: [slow.key], [b]: [] });
    expect(await client.processing([b, "inproc://nowhere/1"])).toEqual({
      [b]: [],
      "inproc://nowhere/1": [],
    });
    expect(await slow).toBe(2);
    expect(await client.processing(a)).toEqual({ [a]: [] });
    expect(await client.nthreads()).toEqual({ [a]: 2, [b]: 2 });
    expect(Object.keys(await client.nthreads())).toEqual([a, b]);
    expect(await client.nthreads([b, "inproc://nowhere/1"])).toEqual({ [b]: 2 });
    await expect(client.processing([""])).rejects.toThrow(
      'processing: expected worker addresses, got [""]',
    );
    await expect(client.nthreads(7 as never)).rejects.toThrow(
      "nthreads: expected worker addresses, got 7",
    );
  });

  it("says how large each result is (nbytes), by key or summed by key prefix", async () => {
    const { client } = await testCluster();
    const small = client.submit(bytes, 1000);
    const large = client.submit(bytes, 5000);
    const n = client.submit(inc, 1);
    await client.gather([small, large, n]);
    const sizes = await client.nbytes();
    expect(Object.keys(sizes).sort()).toEqual([small.key, large.key, n.key].sort());
    expect(sizes[large.key] - sizes[small.key]).toBe(4000);
    expect(await client.nbytes([large, "unknown"])).toEqual({ [large.key]: sizes[large.key] });
    expect(await client.nbytes(small.key)).toEqual({ [small.key]: sizes[small.key] });
    expect(await client.nbytes(undefined, { summary: true })).toEqual({
      bytes: sizes[small.key] + sizes[large.key],
      inc: sizes[n.key],
    });
    expect(await client.nbytes([small, small], { summary: true })).toEqual({
      bytes: sizes[small.key],
    });
    await expect(client.nbytes([7 as never])).rejects.toThrow(
      "nbytes: expected futures of this client or keys, got 7",
    );
    await expect(client.nbytes(undefined, { summary: "yes" as never })).rejects.toThrow(
      'nbytes: summary must be true or false, got "yes"',
    );
  });

  it("a client that closes releases what it held", async () => {
    const { cluster, client } = await testCluster();
    const other = await cluster.client();
    const mine = client.map(inc, [1, 2, 3]);
    const shared = client.submit(inc, 100);
    const theirs = other.submit(inc, 100);
    await client.gather([...mine, shared]);
    await client.close();
    expect(await theirs).toBe(101);
    await eventually(
      () => [...cluster.scheduler.state.tasks.keys()].join() === theirs.key,
      5_000,
      "only the other client's key is left",
    );
    expect(cluster.scheduler.state.clients.has(client.id)).toBe(false);
  });

  it("a client's name starts its id", async () => {
    const { cluster } = await testCluster();
    const named = await Client.connect(cluster.address, {
      name: "reporter",
      logger: memoryLogger().logger,
    });
    expect(named.id).toMatch(/^reporter-/);
    await named.close();
  });

  it("a closed client says why, and its LocalCluster forgets it", async () => {
    const { cluster } = await testCluster();
    // The cluster's own set of clients, to see that it does not keep closed ones.
    const held = (cluster as unknown as { clients: Set<Client> }).clients;
    const before = held.size;
    for (let i = 0; i < 5; i++) {
      const c = await cluster.client();
      // One promise however often read: no resolver kept per read while open.
      expect(c.closed).toBe(c.closed);
      expect(await c.submit(inc, i)).toBe(i + 1);
      await c.close();
      expect((await c.closed).message).toBe("the client was closed");
    }
    await eventually(() => held.size === before, 1_000, "closed clients forgotten");
    // Read only once closed (a LocalCluster's clients have theirs read from the start).
    const own = await Client.connect(cluster.address, { logger: memoryLogger().logger });
    await own.close("done");
    expect((await own.closed).message).toBe("the client was closed: done");
  });

  it("skips malformed messages from the scheduler and goes on", async () => {
    let server: Comm | null = null;
    const listener = await listen("inproc://fake-scheduler", (comm) => {
      server = comm;
      void comm
        .recv()
        .then(() => comm.send({ op: "register-client-reply", status: "OK", ...wireVersion() }));
    });
    const { logger, records } = memoryLogger();
    const client = await Client.connect(listener.address, { logger });
    const f = client.submitWith({ key: "x" }, inc, 1);
    const s = server as unknown as Comm;
    await s.send([
      null,
      { op: "bogus" },
      { op: "task-erred", key: "x" },
      { op: "key-in-memory", key: "x", typename: "number", whoHas: "nope", stimulusId: "s" },
    ]);
    await eventually(() => f.status === "finished", 2_000, "the good message is handled");
    expect(client.isClosed).toBe(false);
    expect(records.map((r) => r.msg)).toEqual(
      expect.arrayContaining([
        "ignored a malformed message from the scheduler",
        "ignored an unknown message",
      ]),
    );
    await client.close();
    await listener.close();
  });

  it("refuses a scheduler of another weft version, naming both", async () => {
    // A scheduler of another version that does not check: it accepts the client.
    let replyVersion: Record<string, unknown> = {};
    const hellos: unknown[] = [];
    const hungUp: Promise<unknown>[] = [];
    const listener = await listen("inproc://other-version", (comm) => {
      hungUp.push(
        (async () => {
          hellos.push(await comm.recv());
          await comm.send({ op: "register-client-reply", status: "OK", ...replyVersion });
          await comm.recv().catch((err: unknown) => err);
        })(),
      );
    });
    const ours = `wire protocol ${WIRE_PROTOCOL_VERSION} (weft ${weftVersion()})`;
    const advice = "run the same weft version on the scheduler, workers and clients";
    await expect(Client.connect(listener.address, { timeoutMs: 5_000 })).rejects.toThrow(
      new Error(
        `the scheduler at ${listener.address} speaks no wire protocol version, so it runs a weft older than this client, which speaks ${ours}: ${advice}`,
      ),
    );
    replyVersion = { protocolVersion: WIRE_PROTOCOL_VERSION + 1, weftVersion: "99.0.0" };
    await expect(Client.connect(listener.address, { timeoutMs: 5_000 })).rejects.toThrow(
      new Error(
        `the scheduler at ${listener.address} speaks wire protocol ${WIRE_PROTOCOL_VERSION + 1} (weft 99.0.0) and this client ${ours}: ${advice}`,
      ),
    );
    expect(hellos).toEqual([
      expect.objectContaining({ op: "register-client", ...wireVersion() }),
      expect.objectContaining({ op: "register-client", ...wireVersion() }),
    ]);
    // The client hung up rather than stay connected to a scheduler it cannot understand.
    await Promise.all(hungUp);
    await listener.close();
  });

  it("fails pending futures when the client closes", async () => {
    const { client } = await testCluster();
    const slow = client.submit("slowInc", 1, 5_000);
    await client.close("the test is over");
    await expect(slow).rejects.toThrow(/^the client was closed: the test is over$/);
    expect(slow.status).toBe("lost");
    await expect(client.cancel(slow)).rejects.toThrow(ClientClosedError);
    expect(() => client.map(inc, [1])).toThrow(ClientClosedError);
    expect(() => client.compute({ a: [inc, 1] })).toThrow(ClientClosedError);
    // Said before what else is wrong with the call.
    await expect(client.scatter([1], { timeoutMs: -1 })).rejects.toThrow(ClientClosedError);
    await expect(client.sub("news")).rejects.toThrow(ClientClosedError);
    await expect(client.retireWorkers()).rejects.toThrow(ClientClosedError);
    await expect(client.amm.status()).rejects.toThrow(ClientClosedError);
    expect(() => client.pub("news").put(1)).toThrow(ClientClosedError);
    expect(() => client.submit(inc, 1)).toThrow(/closed/);
    // Even a graph of literals only.
    await expect(client.get({ a: 1 })).rejects.toThrow(/the client was closed/);
  });

  it("shutdown closes the cluster's workers and scheduler, then the client itself", async () => {
    const { cluster, client } = await testCluster();
    const workers = cluster.workers.map((w) => w.address).sort();
    expect((await client.shutdown()).sort()).toEqual(workers);
    // Closed by the call, not by losing the scheduler.
    expect(client.isClosed).toBe(true);
    expect((await client.closed).message).toBe("the client was closed");
  });

  it("shutdown waits for a scheduler that answers but does not close no longer than timeoutMs", async () => {
    const listener = await listen("inproc://never-closing-scheduler", (comm) => {
      void (async () => {
        await comm.recv();
        await comm.send({ op: "register-client-reply", status: "OK", ...wireVersion() });
        for (;;) {
          const frame = await comm.recv().catch(() => null);
          if (frame === null) return;
          for (const msg of (Array.isArray(frame) ? frame : [frame]) as Record<string, unknown>[]) {
            if (msg.op === "shutdown") {
              await comm.send([{ op: "reply", requestId: msg.requestId, result: ["tcp://w"] }]);
            }
          }
        }
      })();
    });
    const client = await Client.connect(listener.address, { timeoutMs: 300 });
    const started = Date.now();
    expect(await client.shutdown()).toEqual(["tcp://w"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(client.isClosed).toBe(true);
    expect((await client.closed).message).toBe("the client was closed");
    await listener.close();
  });

  it("shutdown resolves once the scheduler has closed: a client connecting next is refused, not dropped", async () => {
    const { cluster, client } = await testCluster();
    await client.shutdown();
    expect(cluster.scheduler.status).not.toBe("running");
    // Refused (nothing listens there any more), rather than connected to a closing scheduler.
    await expect(Client.connect(client.address, { timeoutMs: 300 })).rejects.toThrow(/refused/);
  });

  it("fails pending futures when the scheduler goes away", async () => {
    const { cluster, client } = await testCluster();
    const slow = client.submit("slowInc", 1, 5_000);
    await cluster.scheduler.close();
    await expect(slow).rejects.toThrow(/lost the scheduler/);
    expect(client.isClosed).toBe(true);
  });
});
