/**
 * Task functions for the tests of how values travel (a task module, loaded
 * with the client test tasks): results and actor values that are not data.
 */

import { defineTask } from "../worker/taskRegistry.ts";
import type { Actor } from "./actor.ts";

/** The task module's URL, for `taskModules`. */
export const VALUE_TEST_TASKS = new URL("./valueTestTasks.ts", import.meta.url).href;

/** A class of the task module's own: its instances are not data. */
export class Vec {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
  norm(): number {
    return Math.hypot(this.x, this.y);
  }
}

/** An object whose getter gives data on its first read and a function on the next ones. */
export function fickle(): { readonly x: unknown } {
  let reads = 0;
  return {
    get x(): unknown {
      return reads++ === 0 ? 1 : () => 1;
    },
  };
}

/** An actor that keeps what it is given and gives it back. */
export class Keeper {
  kept: unknown = null;
  keep(value: unknown): string {
    this.kept = value;
    return "kept";
  }
  held(): unknown {
    return this.kept;
  }
  /** Changes what it keeps (an array), in place. */
  push(item: unknown): number {
    return (this.kept as unknown[]).push(item);
  }
  /** Keeps a class instance, which `get("kept")` then cannot send. */
  keepVec(): string {
    this.kept = new Vec(1, 1);
    return "kept";
  }
  vec(): Vec {
    return new Vec(3, 4);
  }
  self(): Keeper {
    return this;
  }
  callback(): { f: () => number } {
    return { f: () => 1 };
  }
  /** In a Map, an object whose getter gives data on its first read and a function after. */
  fickleInMap(): unknown {
    return new Map([["k", fickle()]]);
  }
  nested(levels: number): unknown {
    let v: unknown = 1;
    for (let i = 0; i < levels; i++) v = [v];
    return v;
  }
}

export const keeper = defineTask("keeper", () => new Keeper());
/** Has the keeper `k` keep `[value]`, then a Vec: what each call gave, or its error. */
export const keepFromTask = defineTask("keepFromTask", async (k: Actor<Keeper>, value: unknown) => {
  const outcome = (p: Promise<unknown>) =>
    p.then(
      (v) => ({ ok: v }),
      (e: Error) => ({ error: `${e.name}: ${e.message}` }),
    );
  return [await outcome(k.call("keep", [value])), await outcome(k.call("keep", new Vec(1, 2)))];
});
export const makeVec = defineTask("makeVec", (x: number, y: number) => new Vec(x, y));
export const nestedVec = defineTask("nestedVec", () => ({ rows: [1, { v: new Vec(1, 2) }] }));
export const vecsInMap = defineTask("vecsInMap", () => new Map([["a", new Vec(0, 1)]]));
export const urlResult = defineTask("urlResult", () => new URL("http://example.com/a"));
export const withCallback = defineTask("withCallback", () => ({ f: () => 1 }));
export const asyncVec = defineTask("asyncVec", async () => new Vec(5, 12));
/** Data that passes: its kinds survive every path. */
export const dataResult = defineTask("dataResult", () => ({
  m: new Map([[1, new Set(["a"])]]),
  d: new Date(0),
  b: Buffer.from("ab"),
  f: new Float64Array([1.5]),
  e: new TypeError("t"),
}));
/** An error whose `message` code set to an object (as some libraries do): still data. */
export const oddError = defineTask("oddError", () =>
  Object.assign(new Error("odd"), { message: { code: 42 } }),
);
/** What a value given as an argument is, as it arrived. */
export const describeValue = defineTask("describeValue", (v: unknown) => ({
  kind: Object.prototype.toString.call(v),
  ctor: (v as { constructor?: { name?: string } } | null)?.constructor?.name ?? null,
  isBuffer: Buffer.isBuffer(v),
  shared:
    ArrayBuffer.isView(v) && typeof SharedArrayBuffer !== "undefined"
      ? v.buffer instanceof SharedArrayBuffer
      : v instanceof SharedArrayBuffer,
  first: ArrayBuffer.isView(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength)[0] : null,
}));
