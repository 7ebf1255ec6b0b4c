import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { taskRef } from "../protocol/messagesTaskSpec.ts";
import { endlessMap, endlessSet } from "../util/testRiggedCollections.ts";
import { Future } from "./future.ts";
import { argsWithRefs, isTaskDefinition, KEEP, mapArgs, taskName } from "./taskArgs.ts";
import { standInFutureHost } from "./testFutureHost.ts";

/** Leaves kept as they are: what is checked is the walk, and what it copies. */
const keep = () => KEEP;

describe("taskName", () => {
  it("takes a registered name or a definition's, and refuses an empty one", () => {
    expect(taskName("inc", "submit")).toBe("inc");
    expect(taskName({ name: "inc", fn: (x: number) => x + 1 }, "submit")).toBe("inc");
    expect(() => taskName("", "submit")).toThrow(
      new TypeError(
        'submit: the function must be a task definition (from defineTask) or a registered name, got ""',
      ),
    );
  });

  it("refuses an object with a name and no function: it is no definition", () => {
    const named = { name: "inc" };
    expect(isTaskDefinition(named)).toBe(false);
    expect(() => taskName(named as never, "submit")).toThrow(
      /^submit: the function must be .*, got \{"name":"inc"\}$/,
    );
  });

  it("describes what JSON cannot show (a bigint inside, a cycle) that was given instead", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => taskName([1n] as never, "submit")).toThrow(/, got an array that cannot be shown$/);
    expect(() => taskName(cyclic as never, "submit")).toThrow(
      /, got an object that cannot be shown$/,
    );
  });
});

describe("mapArgs", () => {
  it("copies the mutable data objects: a change after the call is not the task's", () => {
    const buffer = new ArrayBuffer(2);
    const bytes = Buffer.from("ab");
    const floats = Float64Array.from([1, 2]);
    const view = new DataView(new ArrayBuffer(4), 1, 2);
    const when = new Date(0);
    const copy = mapArgs([buffer, { bytes, floats }, [view, when]], keep, "submit") as unknown[];
    new Uint8Array(buffer)[0] = 9;
    bytes[0] = 0x7a;
    floats[0] = 9;
    view.setUint8(0, 9);
    when.setTime(1);
    // Equality does not look into buffers: their bytes are compared.
    const [bufferCopy, { bytes: bytesCopy, floats: floatsCopy }, [viewCopy, whenCopy]] = copy as [
      ArrayBuffer,
      { bytes: Buffer; floats: Float64Array },
      [DataView, Date],
    ];
    expect(new Uint8Array(bufferCopy)).toEqual(new Uint8Array(2));
    expect(Buffer.isBuffer(bytesCopy) && bytesCopy.toString()).toBe("ab");
    expect(floatsCopy).toEqual(Float64Array.from([1, 2]));
    expect(viewCopy.byteLength).toBe(2);
    expect(viewCopy.getUint8(0)).toBe(0);
    expect(whenCopy).toEqual(new Date(0));
  });

  it("copies a subclass of a built-in data class as the built-in it extends, as docs/client.md says", () => {
    class Table extends Map<number, number> {}
    class Row extends Array<number> {}
    class Stamp extends Date {}
    class Bytes extends Uint8Array {}
    const [table, row, stamp, bytes, buffer] = mapArgs(
      [new Table([[1, 2]]), Row.from([1, 2]), new Stamp(0), Bytes.from([1]), Buffer.from("a")],
      keep,
      "submit",
    ) as [unknown, unknown, unknown, unknown, unknown];
    expect(Object.getPrototypeOf(table)).toBe(Map.prototype);
    expect([...(table as Map<number, number>)]).toEqual([[1, 2]]);
    expect(Object.getPrototypeOf(row)).toBe(Array.prototype);
    expect(row).toEqual([1, 2]);
    expect(Object.getPrototypeOf(stamp)).toBe(Date.prototype);
    expect(Object.getPrototypeOf(bytes)).toBe(Uint8Array.prototype);
    expect(Buffer.isBuffer(buffer)).toBe(true);
    // Another realm's typed array is copied as this realm's, as the wire carries it.
    const [foreign] = mapArgs([runInNewContext("new Float32Array([1.5])")], keep, "submit") as [
      unknown,
    ];
    expect(Object.getPrototypeOf(foreign)).toBe(Float32Array.prototype);
    expect(foreign).toEqual(Float32Array.from([1.5]));
    const [view] = mapArgs(
      [runInNewContext("new DataView(new Uint8Array([7, 8, 9]).buffer, 1, 2)")],
      keep,
      "submit",
    ) as [DataView];
    expect(Object.getPrototypeOf(view)).toBe(DataView.prototype);
    expect([view.byteLength, view.getUint8(0), view.getUint8(1)]).toEqual([2, 8, 9]);
    expect(view.buffer).toBeInstanceOf(ArrayBuffer);
  });

  it("refuses an object inheriting a Map's or Set's methods without being one, saying so", () => {
    for (const [fake, name] of [
      [Object.create(Map.prototype), "Map"],
      [Object.create(Set.prototype), "Set"],
    ] as const) {
      expect(() => mapArgs([{ a: fake }], keep, "submit")).toThrow(
        new RegExp(
          `^submit: args\\[0\\]\\.a is a fake ${name} \\(an object inheriting its methods`,
        ),
      );
    }
  });

  it("names an argument it cannot copy: an ArrayBuffer whose memory was transferred away", () => {
    const gone = new ArrayBuffer(8);
    const view = new Uint8Array(gone);
    structuredClone(gone, { transfer: [gone] });
    expect(() => mapArgs([1, { b: gone }], keep, "submit")).toThrow(
      /^submit: args\[1\]\.b cannot be copied: .*detached/,
    );
    expect(() => mapArgs([[view]], keep, "submit")).toThrow(
      /^submit: args\[0\]\[0\] cannot be copied: .*detached/,
    );
  });

  it("checks an error's cause as any argument, and copies it", () => {
    class Vec {
      constructor(readonly x: number) {}
    }
    const refusals: [unknown, string][] = [
      [
        new Error("e", { cause: new Vec(1) }),
        "args[0].cause is a Vec; task arguments must be data",
      ],
      [
        new Error("e", { cause: { shared: new SharedArrayBuffer(8) } }),
        "args[0].cause.shared is a SharedArrayBuffer; task arguments must be data",
      ],
      [
        new Error("e", { cause: [() => 1] }),
        "args[0].cause[0] is a function; task arguments must be data",
      ],
      [
        new TypeError("outer", { cause: new Error("inner", { cause: new Vec(2) }) }),
        "args[0].cause.cause is a Vec; task arguments must be data",
      ],
    ];
    for (const [err, why] of refusals) {
      expect(() => mapArgs([err], keep, "submit")).toThrow(
        new RegExp(`^submit: ${why.replace(/[[\].()]/g, "\\$&")}`),
      );
    }
    const self = new Error("self");
    self.cause = { self };
    expect(() => mapArgs([self], keep, "submit")).toThrow(
      new TypeError("submit: args[0].cause.self contains a reference cycle"),
    );
    // A future in a cause is not looked for (nor a key string replaced): refused.
    const f = new Future(standInFutureHost(), "k");
    expect(() => mapArgs([new Error("e", { cause: { f } })], keep, "submit")).toThrow(
      /^submit: args\[0\]\.cause\.f is a future inside an error's cause, where they are not looked for/,
    );
    const cause = { n: [1] };
    const err = new RangeError("ok", { cause });
    const [copy] = mapArgs([err], () => "replaced", "submit") as [RangeError];
    expect(copy).toBeInstanceOf(RangeError);
    expect(copy.message).toBe("ok");
    expect(copy.stack).toBe(err.stack);
    expect(copy.cause).toEqual(cause);
    expect(copy.cause).not.toBe(cause); // taken as it is at the call
    const [plain] = mapArgs([new Error("no cause")], keep, "submit") as [Error];
    expect(plain.message).toBe("no cause");
    // Strings in a cause are data, not keys: never replaced.
    const [named] = mapArgs([new Error("e", { cause: ["k"] })], () => "replaced", "submit") as [
      Error,
    ];
    expect(named.cause).toEqual(["k"]);
  });

  it("takes an object without a prototype as a plain object", () => {
    const bare = Object.assign(Object.create(null) as object, { a: [1], s: "x" });
    expect(mapArgs([bare], keep, "submit")).toEqual([{ a: [1], s: "x" }]);
  });

  it("checks a Map's keys as its values, and refuses a Map or Set holding itself or nested too deep", () => {
    expect(() => mapArgs([new Map([[() => 1, "v"]])], keep, "submit")).toThrow(
      new TypeError("submit: args[0].<key 0> is a function; task arguments must be data"),
    );
    const self = new Map<string, unknown>();
    self.set("self", self);
    expect(() => mapArgs([self], keep, "submit")).toThrow(
      new TypeError("submit: args[0].<value 0> contains a reference cycle"),
    );
    let deep = new Set<unknown>();
    for (let i = 0; i < 1_000; i++) deep = new Set([deep]);
    expect(() => mapArgs([deep], keep, "submit")).toThrow(
      /^submit: args: nested deeper than 1000 arrays, objects, Maps or Sets$/,
    );
  });

  it("copies what a Map or Set holds, not what its own iterator yields", () => {
    // Their own iterators yield their first item forever.
    const m = endlessMap([
      ["x", 1],
      ["y", 2],
    ]);
    const s = endlessSet(["a", "b"]);
    const [mCopy, sCopy] = mapArgs([m, s], keep, "submit") as [Map<string, number>, Set<string>];
    expect([...Map.prototype.entries.call(mCopy)]).toEqual([
      ["x", 1],
      ["y", 2],
    ]);
    expect([...Set.prototype.values.call(sCopy)]).toEqual(["a", "b"]);
    expect(() =>
      mapArgs(
        [
          endlessMap<string, unknown>([
            ["x", 1],
            ["f", () => 1],
          ]),
        ],
        keep,
        "submit",
      ),
    ).toThrow(
      new TypeError("submit: args[0].<value 1> is a function; task arguments must be data"),
    );
  });

  it("names a data object of another realm, which the wire would not carry", () => {
    expect(() => mapArgs([runInNewContext("new Date(0)")], keep, "submit")).toThrow(
      /^submit: args\[0\] is a Date made in another realm \(a vm context: copy it into a Date of this one\)/,
    );
    for (const [made, name] of [
      ["new Map()", "Map"],
      ["new Set()", "Set"],
      ["/x/", "RegExp"],
      ["new TypeError('x')", "TypeError"],
      ["new ArrayBuffer(1)", "ArrayBuffer"],
    ]) {
      expect(() => mapArgs([1, runInNewContext(made)], keep, "submit"), made).toThrow(
        `submit: args[1] is a ${name} made in another realm`,
      );
    }
  });
});

describe("argsWithRefs", () => {
  it("makes the futures of its client references and dependencies, and refuses another client's", () => {
    const mine = standInFutureHost();
    const f = new Future(mine, "f-1");
    const deps = new Set<string>();
    expect(argsWithRefs([{ x: [f] }, f], deps, mine, "submit(inc)")).toEqual([
      { x: [taskRef("f-1")] },
      taskRef("f-1"),
    ]);
    expect([...deps]).toEqual(["f-1"]);
    const theirs = new Future(standInFutureHost(), "g-1");
    expect(() => argsWithRefs([1, { y: theirs }], new Set(), mine, "submit(inc)")).toThrow(
      new TypeError("submit(inc): args[1].y is a future of another client"),
    );
  });
});
