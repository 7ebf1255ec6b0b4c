import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { ClonedValue } from "./clonedValue.ts";
import { SerializationError } from "./errors.ts";
import { ForwardedBytes, ForwardedClonedValue } from "./forwardedBytes.ts";
import {
  messageLength,
  messageSegments,
  splitMessage,
  splitMessagePieces,
} from "./messageLayout.ts";
import {
  decodeMessage,
  ERROR_EXTENSION_TYPE,
  encodeMessage,
  OUT_OF_BAND_BYTES_EXTENSION_TYPE,
  OUT_OF_BAND_MIN_BYTES,
} from "./wireCodec.ts";

const roundTrip = (v: unknown) => {
  const { payload, buffers } = encodeMessage(v);
  return decodeMessage(payload, buffers);
};

describe("wire codec", () => {
  it("round-trips Maps (any keys) and Sets, at any depth", () => {
    const v = {
      m: new Map<unknown, unknown>([
        [1, "one"],
        ["__weird", new Map([["inner", new Set([1, new Map([["x", 1]])])]])],
      ]),
      list: [new Set(["a"]), { deep: new Map() }],
    };
    const out = roundTrip(v) as typeof v;
    expect(out).toEqual(v);
    expect(out.m).toBeInstanceOf(Map);
    expect(out.m.get(1)).toBe("one");
  });

  it("keeps -0 apart from 0, at the top and nested", () => {
    expect(Object.is(roundTrip(-0), -0)).toBe(true);
    const out = roundTrip({ z: -0, list: [0, -0, 1.5, -2], m: new Map([[-0, -0]]) }) as {
      z: number;
      list: number[];
      m: Map<number, number>;
    };
    expect(Object.is(out.z, -0)).toBe(true);
    expect(out.list.map((x) => Object.is(x, -0))).toEqual([false, true, false, false]);
    expect(Object.is([...out.m.values()][0], -0)).toBe(true);
    expect(Object.is(roundTrip(0), 0)).toBe(true);
  });

  it("encodes objects of more than 65,535 keys (large graphs)", () => {
    const big: Record<string, number> = {};
    for (let i = 0; i < 70_000; i++) big[`k${i}`] = i;
    const out = roundTrip({ op: "update-graph", tasks: big }) as { tasks: Record<string, number> };
    expect(Object.keys(out.tasks)).toHaveLength(70_000);
    expect(out.tasks.k69999).toBe(69_999);
  });

  it("plain objects stay plain objects and arrays arrays", () => {
    expect(roundTrip({ a: [1, { b: "c" }] })).toEqual({ a: [1, { b: "c" }] });
    expect(Array.isArray(roundTrip([1, 2]))).toBe(true);
  });

  it("does not modify the message it encodes", () => {
    const inner = new Map([["k", 1]]);
    const msg = { list: [inner], s: new Set([inner]) };
    roundTrip(msg);
    expect(msg.list[0]).toBe(inner);
    expect([...msg.s][0]).toBe(inner);
  });

  it("ordinary messages are standard msgpack (readable without extensions)", () => {
    const { payload: bytes, buffers } = encodeMessage({ op: "x", n: 1 });
    expect(buffers).toEqual([]);
    // a msgpack map (msgpackr writes objects as map16), with no extension byte anywhere
    expect([0x82, 0xde]).toContain(bytes[0]);
    expect([...bytes].some((b) => b >= 0xc7 && b <= 0xc9)).toBe(false);
    expect([...bytes].some((b) => b >= 0xd4 && b <= 0xd8)).toBe(false);
  });

  it("refuses functions, symbols and cycles", () => {
    expect(() => encodeMessage({ f: () => 1 })).toThrow(SerializationError);
    expect(() => encodeMessage([Symbol("s")])).toThrow(/symbol/);
    const cyc: Record<string, unknown> = {};
    cyc.self = cyc;
    expect(() => encodeMessage(cyc)).toThrow(/cycle/);
  });

  it("walks an error's cause as any value: Maps and -0 kept, functions and cycles refused", () => {
    // msgpackr packed [name, message, cause] itself: the cause went out as found.
    const e = new TypeError("t", { cause: { m: new Map([[1, -0]]), z: -0 } });
    const out = roundTrip({ args: [e] }) as { args: [TypeError] };
    expect(out.args[0]).toBeInstanceOf(TypeError);
    expect(out.args[0].message).toBe("t");
    const cause = out.args[0].cause as { m: Map<number, number>; z: number };
    expect(cause.m).toBeInstanceOf(Map);
    expect(Object.is(cause.m.get(1), -0)).toBe(true);
    expect(Object.is(cause.z, -0)).toBe(true);
    // The caller's error is not changed (copy on write).
    expect((e.cause as { m: unknown }).m).toBeInstanceOf(Map);
    expect(() => encodeMessage([new Error("e", { cause: { f: () => 1 } })])).toThrow(
      /cannot encode a function/,
    );
    const self = new Error("self");
    self.cause = { back: self };
    expect(() => encodeMessage([self])).toThrow(/reference cycle/);
    // An error without a cause, or whose cause needs nothing, goes out itself.
    expect((roundTrip([new RangeError("r", { cause: "why" })]) as [Error])[0].cause).toBe("why");
  });

  it("carries an error's stack, and a cause only if it has one, as the structured clone does", () => {
    const plain = new TypeError("orig");
    const [out] = roundTrip([plain]) as [TypeError];
    expect(out).toBeInstanceOf(TypeError);
    // Not msgpackr's decoding frames, which its own encoding left as the stack.
    expect(out.stack).toBe(plain.stack);
    expect(Object.hasOwn(out, "cause")).toBe(false);
    expect(out).toEqual(structuredClone(plain));
    const caused = new Error("outer", { cause: undefined });
    expect(Object.hasOwn((roundTrip([caused]) as [Error])[0], "cause")).toBe(true);
    // An error of another name: an Error named so; an AggregateError keeps its errors.
    class MyError extends Error {
      override name = "MyError";
    }
    const [mine, agg] = roundTrip([
      new MyError("mine"),
      new AggregateError([new RangeError("a")], "agg", { cause: 1 }),
    ]) as [Error, AggregateError];
    expect([mine.constructor, mine.name, mine.message]).toEqual([Error, "MyError", "mine"]);
    expect(mine.stack).toMatch(/^MyError: mine\n {4}at /);
    expect(agg).toBeInstanceOf(AggregateError);
    expect([agg.message, agg.cause, agg.errors[0]]).toEqual(["agg", 1, new RangeError("a")]);
    // A cause of null stays null; a name or message that is no string goes as its text.
    expect((roundTrip([new Error("n", { cause: null })]) as [Error])[0].cause).toBeNull();
    const numbered = new Error("m");
    numbered.name = 5 as never;
    expect((roundTrip([numbered]) as [Error])[0].name).toBe("5");
    // A stack that is no string is not replaced by the decoder's own.
    const odd = new Error("odd");
    odd.stack = 5 as never;
    expect((roundTrip([odd]) as [Error])[0].stack).toBeUndefined();
  });

  it("refuses a malformed error from the wire with a message naming it", () => {
    // The extension as msgpackr writes it (fixext 1, then the fields' array), of [1, 2].
    const bad = Uint8Array.from([0xd4, ERROR_EXTENSION_TYPE, 0x00, 0x92, 0x01, 0x02]);
    expect(() => decodeMessage(bad)).toThrow(SerializationError);
    expect(() => decodeMessage(bad)).toThrow(/malformed Error extension/);
  });

  it("encodes task arguments as deep as they may be; deeper is a SerializationError, never a stack overflow", () => {
    const nest = (n: number, wrap: (v: unknown, i: number) => unknown): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < n; i++) v = wrap(v, i);
      return v;
    };
    // 1,000 levels of arguments (MAX_ARG_DEPTH) inside a compute-task message.
    const args = nest(1000, (v, i) => (i % 2 === 0 ? [v] : { v }));
    const msg = { op: "compute-task", key: "k", runSpec: { fn: "f", args: [args] } };
    expect(roundTrip(msg)).toEqual(msg);
    // 1,100 levels, the message's own included, and no more.
    const deepest = { op: "x", deep: nest(1099, (v) => [v]) };
    expect(roundTrip(deepest)).toEqual(deepest);
    for (const deep of [
      nest(1100, (v) => [v]),
      nest(1200, (v) => [v]),
      nest(2100, (v, i) => (i % 2 === 0 ? new Map([["k", v]]) : new Set([v]))),
      nest(100_000, (v) => ({ v })),
    ]) {
      expect(() => encodeMessage({ op: "x", deep })).toThrow(SerializationError);
      expect(() => encodeMessage({ op: "x", deep })).toThrow(/nested deeper than 1100/);
    }
  });

  it("finds cycles of any length through arrays, maps and sets, and deep shared references are no cycle", () => {
    const a: unknown[] = [];
    const m = new Map<string, unknown>([["a", a]]);
    a.push(new Set([{ m }]));
    expect(() => encodeMessage({ op: "x", a })).toThrow(/reference cycle/);
    // The same object many times along one deep path is a cycle only if it contains itself.
    let deep: unknown = { leaf: 1 };
    const shared = { s: true };
    for (let i = 0; i < 100; i++) deep = { next: deep, shared };
    expect(roundTrip(deep)).toEqual(deep);
  });

  it("shared (non-cyclic) references are written twice", () => {
    const shared = { x: 1 };
    const out = roundTrip([shared, shared]) as unknown[];
    expect(out).toEqual([{ x: 1 }, { x: 1 }]);
  });

  it("a Map extension of an odd number of keys and values is malformed, not a Map with a key made up", () => {
    // Extension 0x6d as msgpackr writes it (fixext 1, then the entries' array), of [1, 2, 3].
    const odd = Buffer.from("d46d0093010203", "hex");
    expect(() => decodeMessage(odd)).toThrow(SerializationError);
    expect(() => decodeMessage(odd)).toThrow(/malformed Map extension/);
    expect(decodeMessage(Buffer.from("d46d0094010203a178", "hex"))).toEqual(
      new Map<unknown, unknown>([
        [1, 2],
        [3, "x"],
      ]),
    );
  });

  it("a message of more than 65,535 keys sends each out-of-band buffer once", () => {
    // Encoded twice (the second time with per-object map sizes): the buffers the
    // first try wrote before it failed would otherwise go out too, a large argument twice.
    const tasks: Record<string, number> = {};
    for (let i = 0; i < 70_000; i++) tasks[`k${i}`] = i;
    const arg = new Float64Array(OUT_OF_BAND_MIN_BYTES / 8).fill(1.5);
    const { payload, buffers } = encodeMessage({ arg, cloned: new ClonedValue([1]), tasks });
    expect(buffers).toHaveLength(2);
    const out = decodeMessage(payload, buffers) as { arg: Float64Array; cloned: ClonedValue };
    expect(out.arg).toEqual(arg);
    expect(out.cloned.value).toEqual([1]);
  });

  it("malformed bytes raise a SerializationError", () => {
    expect(() => decodeMessage(new Uint8Array([0x92, 0x01]))).toThrow(SerializationError);
    expect(() => decodeMessage(new Uint8Array([0xd4, 0x6d, 0x00, 0x01]))).toThrow(
      SerializationError,
    );
  });

  it("a ClonedValue crosses with the structured-clone algorithm's fidelity", () => {
    const cyc: Record<string, unknown> = { n: 1 };
    cyc.self = cyc;
    const shared = { x: 1 };
    const sparse = [1];
    sparse[3] = 4;
    const proto = JSON.parse('{"__proto__": 1}') as unknown;
    const value = { cyc, pair: [shared, shared], sparse, proto, z: -0, big: 2n ** 70n };
    const out = roundTrip({ op: "x", data: new Map([["k", new ClonedValue(value)]]) }) as {
      data: Map<string, ClonedValue>;
    };
    const got = out.data.get("k");
    expect(got).toBeInstanceOf(ClonedValue);
    const v = got?.value as typeof value;
    expect(v.cyc.self).toBe(v.cyc);
    expect(v.pair[0]).toBe(v.pair[1]);
    expect(1 in v.sparse).toBe(false);
    expect(v.sparse).toHaveLength(4);
    expect(Object.keys(v.proto as object)).toEqual(["__proto__"]);
    expect(Object.is(v.z, -0)).toBe(true);
    expect(v.big).toBe(2n ** 70n);
  });

  it("typed arrays, Buffers and ArrayBuffers as cloned values travel as raw bytes", () => {
    const values: unknown[] = [
      Float64Array.from([1.5, -0, Number.NaN, 2 ** 60]),
      new Float64Array(new ArrayBuffer(40), 8, 3).fill(2), // a view with an offset
      Int16Array.from([-1, 2, 3]),
      Uint8ClampedArray.from([0, 255]),
      BigInt64Array.from([-(2n ** 63n), 7n]),
      Buffer.from("bytes"),
      Uint8Array.from([1, 2, 3]).buffer,
      new Float32Array(0),
    ];
    const encoded = encodeMessage({
      data: new Map(values.map((v, i) => [i, new ClonedValue(v)])),
    });
    const { payload } = encoded;
    const buffers = encoded.buffers as Uint8Array[]; // each in one piece: made here
    expect(buffers).toHaveLength(values.length);
    expect(buffers[1].byteLength).toBe(24); // the view's bytes only
    // As laid out on the wire, each buffer may start anywhere: aligned or not, the same
    // values; a received frame is a Node.js Buffer (whose slice() is a view, not a copy).
    for (const [shift, alloc] of [0, 1, 3].flatMap((s) => [
      [s, (n: number) => new Uint8Array(n)] as const,
      [s, (n: number) => Buffer.alloc(n)] as const,
    ])) {
      const moved = buffers.map((b) => {
        const copy = alloc(b.length + shift);
        copy.set(b, shift);
        return copy.subarray(shift);
      });
      const out = decodeMessage(payload, moved) as { data: Map<number, ClonedValue> };
      values.forEach((v, i) => {
        const got = out.data.get(i)?.value;
        expect(Object.getPrototypeOf(got), `value ${i}`).toBe(Object.getPrototypeOf(v));
        expect(got, `value ${i}, shifted by ${shift}`).toEqual(v);
      });
    }
  });

  it("large typed arrays, Buffers and ArrayBuffers go out of band, uncopied, and come back as they were", () => {
    const n = OUT_OF_BAND_MIN_BYTES;
    const floats = Float64Array.from({ length: n / 8 }, (_, i) => i / 3);
    const view = new Int32Array(new ArrayBuffer(n + 16), 4, n / 4).fill(-7); // with an offset
    const buf = Buffer.alloc(n, 9);
    const raw = new Uint8Array(n).fill(5).buffer;
    const small = new Float64Array(n / 8 - 1);
    const msg = { op: "update-graph", args: [floats, { view, buf }, raw, small] };
    const encoded = encodeMessage(msg);
    const outOfBand = encoded.buffers as Uint8Array[]; // each in one piece: made here
    // The small one in the payload; the others views of the caller's memory, not copies.
    expect(outOfBand).toHaveLength(4);
    expect(outOfBand.map((b) => b.buffer)).toEqual([floats.buffer, view.buffer, buf.buffer, raw]);
    expect(outOfBand[1].byteOffset).toBe(4);
    expect(encoded.payload.length).toBeLessThan(small.byteLength + 100);
    expect(msg.args[0]).toBe(floats); // the message is not modified
    // As a TCP message arrives: its bytes in one buffer, the arrays read where they lie.
    const wire = Buffer.concat(messageSegments(encoded));
    expect(wire.length).toBe(messageLength(messageSegments(encoded)));
    const { payload, buffers } = splitMessage(wire);
    const out = decodeMessage(payload, buffers) as typeof msg;
    expect(out).toStrictEqual(msg);
    expect(out.args[0]).toBeInstanceOf(Float64Array);
    // One of several: copied out (see the next test).
    expect((out.args[0] as Float64Array).buffer.byteLength).toBe(floats.byteLength);
    expect(Buffer.isBuffer((out.args[1] as { buf: unknown }).buf)).toBe(true);
    // A message's one large array is read where it lies.
    const alone = Buffer.concat(messageSegments(encodeMessage({ op: "x", floats })));
    const one = splitMessage(alone);
    const read = (decodeMessage(one.payload, one.buffers) as { floats: Float64Array }).floats;
    expect(read.buffer === alone.buffer).toBe(true);
    // Below the threshold: in the payload, as before.
    expect(encodeMessage([small, new Uint8Array(n - 1)]).buffers).toEqual([]);
    // A reference to a buffer the message does not have is a malformed frame.
    expect(() => decodeMessage(encoded.payload, encoded.buffers.slice(0, 2))).toThrow(
      /malformed frame: no out-of-band buffer 2/,
    );
  });

  it("a typed array of a subclass or of another realm travels as this realm's built-in class, small or large", () => {
    // msgpackr has no code for a subclass: it wrote one no reader knew ("malformed frame").
    class Bytes extends Uint8Array {}
    class Floats extends class Samples extends Float64Array {} {}
    const small = Bytes.from([1, 2, 3]);
    const large = new Floats(
      new ArrayBuffer(OUT_OF_BAND_MIN_BYTES + 16),
      8,
      OUT_OF_BAND_MIN_BYTES / 8,
    ).fill(0.5);
    const encoded = encodeMessage({ op: "x", small, large });
    expect(encoded.buffers).toHaveLength(1); // the large one still goes out uncopied
    expect((encoded.buffers as Uint8Array[])[0].buffer).toBe(large.buffer);
    const out = decodeMessage(encoded.payload, encoded.buffers) as {
      small: unknown;
      large: unknown;
    };
    expect(Object.getPrototypeOf(out.small)).toBe(Uint8Array.prototype);
    expect(out.small).toEqual(Uint8Array.from([1, 2, 3]));
    expect(Object.getPrototypeOf(out.large)).toBe(Float64Array.prototype);
    expect(out.large).toEqual(new Float64Array(OUT_OF_BAND_MIN_BYTES / 8).fill(0.5));
    // Another realm's (a vm context's) went as a plain object of its indexes, {0: 1.5, 1: 2}.
    const foreign = runInNewContext("new Float32Array([1.5, 2])") as Float32Array;
    const back = encodeMessage({ foreign });
    const { foreign: read } = decodeMessage(back.payload, back.buffers) as { foreign: unknown };
    expect(Object.getPrototypeOf(read)).toBe(Float32Array.prototype);
    expect(read).toEqual(Float32Array.from([1.5, 2]));
  });

  it("values read from a message holding several are copied out of it: none keeps the others' memory", () => {
    // A peer's get_data answer: ten results of 100 kB in one message. Read in place,
    // each kept the whole message allocated until the last was let go of.
    const values = Array.from({ length: 10 }, (_, i) => new Uint8Array(100_000).fill(i));
    const msg = { status: "OK", data: values.map((v) => new ClonedValue(v)) };
    const wire = Buffer.concat(messageSegments(encodeMessage(msg)));
    const { payload, buffers } = splitMessage(wire);
    const out = decodeMessage(payload, buffers) as { data: ClonedValue[] };
    for (const [i, c] of out.data.entries()) {
      const v = c.value as Uint8Array;
      expect(v).toBeInstanceOf(Uint8Array);
      expect(v.buffer.byteLength).toBe(100_000);
      expect(v.every((b) => b === i)).toBe(true);
    }
    // A small value in a large buffer (a socket's chunk) is copied too; one that fills
    // most of its buffer, as a message's one large value, is not.
    const chunk = Buffer.alloc(65_536);
    const lone = encodeMessage({ data: [new ClonedValue(new Uint8Array(100).fill(7))] });
    const at = messageSegments(lone).reduce((n, seg) => {
      chunk.set(seg, n);
      return n + seg.length;
    }, 0);
    const small = splitMessage(chunk.subarray(0, at));
    const got = (decodeMessage(small.payload, small.buffers) as { data: ClonedValue[] }).data[0];
    expect((got.value as Uint8Array).buffer.byteLength).toBe(100);
  });

  it("small arrays nested in a received cloned value are copied out of the message; a large one is read in place", () => {
    // A task's result { small: 3 bytes, big: 1.6 MB } as a peer's get_data answer
    // brings it: the small array was a view of the whole message, kept allocated by it.
    const value = { small: Uint8Array.from([1, 2, 3]), big: new Uint8Array(1_600_000).fill(4) };
    const wire = Buffer.concat(messageSegments(encodeMessage({ data: [new ClonedValue(value)] })));
    const { payload, buffers } = splitMessage(wire);
    const got = (decodeMessage(payload, buffers) as { data: ClonedValue[] }).data[0]
      .value as typeof value;
    expect(got.small).toEqual(value.small);
    expect(got.small.buffer.byteLength).toBe(3);
    expect(got.big.buffer).toBe(wire.buffer);
  });

  it("forwarding, large byte arrays and raw cloned values are passed on unread, as the same bytes", () => {
    const n = OUT_OF_BAND_MIN_BYTES;
    const floats = Float64Array.from({ length: n / 8 }, (_, i) => i / 3);
    const buf = Buffer.alloc(n + 3, 9);
    const raw = new Uint8Array(n).fill(5).buffer;
    const msg = {
      op: "update-graph",
      tasks: new Map([["t", { spec: { fn: "f", args: [floats, { buf }, [raw], -0] } }]]),
      values: [new ClonedValue(floats)],
    };
    const wire = Buffer.concat(messageSegments(encodeMessage(msg)));
    // As frames arrive: in chunks, each in its own memory.
    const chunks: Buffer[] = [];
    for (let i = 0; i < wire.length; i += 10_000)
      chunks.push(Buffer.from(wire.subarray(i, i + 10_000)));
    const { payload, buffers } = splitMessagePieces(chunks);
    const got = decodeMessage(payload, buffers, { forward: true }) as {
      tasks: Map<string, { spec: { args: [unknown, { buf: unknown }, unknown[], number] } }>;
      values: unknown[];
    };
    const args = got.tasks.get("t")?.spec.args;
    if (args === undefined) throw new Error("task t missing");
    const forwarded = [args[0], args[1].buf, args[2][0], got.values[0]];
    expect(forwarded.map((f) => f?.constructor)).toEqual([
      ForwardedBytes,
      ForwardedBytes,
      ForwardedBytes,
      ForwardedClonedValue,
    ]);
    const received = new Set(chunks.map((c) => c.buffer));
    for (const f of forwarded as ForwardedBytes[]) {
      expect(f.pieces.length).toBeGreaterThan(1); // not joined
      for (const p of f.pieces) expect(received.has(p.buffer)).toBe(true);
    }
    expect((args[0] as ForwardedBytes).byteLength).toBe(n);
    // Nothing of them shows to code looking inside (validation, logs).
    expect(Object.keys(args[0] as object)).toEqual([]);
    expect(JSON.stringify(args[0])).toBe(`{"forwardedBytes":${n}}`);
    expect(Object.is(args[3], -0)).toBe(true);
    // Sent on: the bytes the sender sent, so the receiver decodes what was sent.
    const again = Buffer.concat(messageSegments(encodeMessage(got)));
    expect(again.equals(wire)).toBe(true);
    const { payload: p2, buffers: b2 } = splitMessage(again);
    expect(decodeMessage(p2, b2)).toStrictEqual(msg);
    // Serialized values are read (and so checked for the receiver) all the same.
    const objects = Array.from({ length: n / 16 }, (_, i) => ({ i, s: "x" }));
    const cloned = splitMessage(
      Buffer.concat(messageSegments(encodeMessage([new ClonedValue(objects)]))),
    );
    const read = decodeMessage(cloned.payload, cloned.buffers, { forward: true }) as ClonedValue[];
    expect(read[0]).toBeInstanceOf(ClonedValue);
    expect(read[0].value).toEqual(objects);
  });

  it("forwarding refuses raw bytes the receiver could not read", () => {
    const n = OUT_OF_BAND_MIN_BYTES;
    const encoded = encodeMessage([new Float64Array(n / 8), new ClonedValue(new Int32Array(4))]);
    const { payload } = encoded;
    const [floats, ints] = encoded.buffers as Uint8Array[];
    // A Float64Array of a length that is not a whole number of elements.
    expect(() => decodeMessage(payload, [floats.subarray(1), ints], { forward: true })).toThrow(
      /malformed frame: Float64Array of 65535 bytes/,
    );
    expect(() => decodeMessage(payload, [floats, ints.subarray(3)], { forward: true })).toThrow(
      /malformed frame: Int32Array of 13 bytes/,
    );
    // An unknown kind byte.
    const bad = Buffer.from(payload);
    const at = bad.indexOf(Buffer.from([0xc7, 5, OUT_OF_BAND_BYTES_EXTENSION_TYPE]));
    expect(at).toBeGreaterThanOrEqual(0);
    bad[at + 3 + 4] = 200;
    expect(() => decodeMessage(bad, [floats, ints], { forward: true })).toThrow(
      /malformed frame: unknown raw value kind 200/,
    );
    expect(() => decodeMessage(payload, [floats], { forward: true })).toThrow(
      /no out-of-band buffer 1/,
    );
  });

  it("a ClonedValue that cannot be cloned is a SerializationError", () => {
    expect(() => encodeMessage(new ClonedValue({ f: () => 1 }))).toThrow(
      /cannot encode message: cannot clone a value/,
    );
    try {
      encodeMessage(new ClonedValue(Symbol("s")));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(SerializationError);
    }
  });
});
