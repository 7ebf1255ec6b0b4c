import { afterEach, describe, expect, it } from "vitest";
import { proxyContents } from "./proxyContents.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { identity, inc } from "./testTasks.ts";

afterEach(closeTestClusters);

/** A proxy of a plain object every trap of which throws `Error: trap`. */
function trapping(): object {
  const t = () => {
    throw new Error("trap");
  };
  return new Proxy(
    {},
    { get: t, ownKeys: t, getPrototypeOf: t, has: t, getOwnPropertyDescriptor: t },
  );
}

describe("proxyContents", () => {
  it("reads an array's or a plain object's proxy once, and nothing of another", () => {
    expect(proxyContents(new Proxy([1, { a: 2 }], {}), () => "here")).toEqual([1, { a: 2 }]);
    const fields = proxyContents(new Proxy(JSON.parse('{"x":1,"__proto__":2}'), {}), () => "here");
    expect(Object.keys(fields as object)).toEqual(["x", "__proto__"]);
    expect(proxyContents(new Proxy(new Date(0), {}), () => "here")).toBeNull();
  });

  it("names the place of a proxy whose trap throws, or that was revoked", () => {
    expect(() => proxyContents(trapping(), () => "f: value.a")).toThrow(
      new TypeError("f: value.a cannot be read (a Proxy whose trap threw): Error: trap"),
    );
    const { proxy, revoke } = Proxy.revocable([], {});
    revoke();
    expect(() => proxyContents(proxy, () => "f: value")).toThrow(
      /^f: value cannot be read \(a Proxy whose trap threw\): TypeError: Cannot perform 'IsArray' on a proxy that has been revoked$/,
    );
  });
});

describe("a Proxy whose trap throws, in a call's value", () => {
  it("is refused naming the call and where it sits", async () => {
    const { client } = await testCluster();
    const refusals: [() => unknown, string][] = [
      [() => client.submit(identity, { a: [trapping()] }), "submit(identity): args[0].a[0]"],
      [() => client.variable("v").set({ a: trapping() }), "Variable.set: value.a"],
      [() => client.queue("q").put({ a: [1, trapping()] }), "Queue.put: value.a[1]"],
      [() => client.publishDataset("d", { a: trapping() }), "publishDataset: value.a"],
      [() => client.gather({ a: trapping() } as never), "gather: value.a"],
      [
        () => client.logEvent("t", { m: new Map([[1, trapping()]]) }),
        "logEvent: value.m.<value 0>",
      ],
    ];
    for (const [call, where] of refusals) {
      const err = await (async () => call())().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TypeError);
      expect((err as Error).message).toBe(
        `${where} cannot be read (a Proxy whose trap threw): Error: trap`,
      );
    }
  });

  it("one that reads well is walked as its contents: submit copies it, gather finds its futures", async () => {
    const { client } = await testCluster();
    const f = client.submit(inc, 1);
    expect(await client.submit(identity, new Proxy({ a: [new Proxy([1, 2], {})] }, {}))).toEqual({
      a: [[1, 2]],
    });
    expect(await client.gather(new Proxy({ r: [f] }, {}) as never)).toEqual({ r: [2] });
  });
});
