/**
 * Values the scheduler keeps for clients (metadata, events, published
 * messages, variables, queues, datasets) follow the rule of task values: data
 * only, copied as the wire copies them, the same in process as over TCP.
 */

import { afterAll, describe, expect, it } from "vitest";
import { closeTestClusters, testCluster } from "./testCluster.ts";

afterAll(closeTestClusters);

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

describe("values the scheduler keeps for clients", () => {
  it("are refused when not data, naming the method and the place", async () => {
    const { client } = await testCluster();
    const shared = new SharedArrayBuffer(8);
    const cases: [string, () => Promise<unknown> | unknown, RegExp][] = [
      [
        "setMetadata",
        () => client.setMetadata("k", { at: new Point(1, 2) }),
        /^setMetadata: the value cannot be sent: value\.at is a Point/,
      ],
      [
        "logEvent",
        () => client.logEvent("t", [new Point(1, 2)]),
        /^logEvent: the value cannot be sent: value\[0\] is a Point/,
      ],
      [
        "Pub.put",
        () => client.pub("p").put({ f: () => 1 } as never),
        /the value cannot be sent: value\.f is a function/,
      ],
      [
        "Variable.set",
        () => client.variable("v").set({ buf: shared }),
        /the value cannot be sent: value\.buf is a SharedArrayBuffer/,
      ],
      [
        "Queue.put",
        () => client.queue("q").put(new Point(0, 0)),
        /the value cannot be sent: value is a Point/,
      ],
      [
        "publishDataset",
        () => client.publishDataset("d", { p: new Point(3, 4) }),
        /^publishDataset: the value cannot be sent: value\.p is a Point/,
      ],
    ];
    for (const [what, call, message] of cases) {
      let error: unknown = null;
      try {
        await call();
      } catch (err) {
        error = err;
      }
      expect(error, what).toBeInstanceOf(TypeError);
      expect((error as Error).message, what).toMatch(message);
    }
  });

  it("arrive as the wire gives them, copies of their own: a Buffer stays a Buffer", async () => {
    const { client } = await testCluster();
    const value = { bytes: Buffer.from("abc"), list: [1, 2] };
    await client.setMetadata("m", value);
    value.list.push(3);
    value.bytes[0] = 0x7a;
    const got = (await client.getMetadata("m")) as typeof value;
    expect(Buffer.isBuffer(got.bytes)).toBe(true);
    expect(got.bytes.toString()).toBe("abc");
    expect(got.list).toEqual([1, 2]);
    // Each getter has a copy of its own.
    got.list.push(9);
    expect(((await client.getMetadata("m")) as typeof value).list).toEqual([1, 2]);
    const v = client.variable<{ bytes: Buffer }>("buffers");
    await v.set({ bytes: Buffer.from("xyz") });
    expect(Buffer.isBuffer((await v.get()).bytes)).toBe(true);
  });

  it("keep reference cycles and shared parts (data, as the wire copies it), in linear time", async () => {
    const { client } = await testCluster();
    type Node = { name: string; self?: Node };
    const cyclic: Node = { name: "loop" };
    cyclic.self = cyclic;
    await client.setMetadata("cyclic", cyclic);
    const got = (await client.getMetadata("cyclic")) as Node;
    expect(got.self).toBe(got);
    await client.logEvent("cycles", cyclic);
    const v = client.variable<Node>("cyclic");
    await v.set(cyclic);
    const back = await v.get();
    expect(back.self).toBe(back);
    const q = client.queue<Node>("cyclic");
    await q.put(cyclic);
    expect((await q.get()).name).toBe("loop");
    // Each level holds the one below twice: 2^40 paths, 40 arrays.
    let shared: unknown[] = [];
    for (let i = 0; i < 40; i++) shared = [shared, shared];
    await client.setMetadata("shared", shared);
    const top = (await client.getMetadata("shared")) as unknown[][];
    expect(top[0]).toBe(top[1]);
  });
});
