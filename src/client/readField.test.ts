import { afterEach, describe, expect, it } from "vitest";
import { GETTER_THREW, unreadable } from "./readField.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { identity } from "./testTasks.ts";

afterEach(closeTestClusters);

const boom = new Error("boom");

/** A plain object whose field `b` is a getter throwing {@link boom}. */
function throwing(): object {
  return {
    get b(): number {
      throw boom;
    },
  };
}

/** An array whose index 0 is a getter throwing {@link boom}. */
function throwingArray(): unknown[] {
  return Object.defineProperty([1], 0, {
    get() {
      throw boom;
    },
  });
}

/** Values to scatter by name, the one named `a` a getter throwing {@link boom}. */
function throwingNamed(): Record<string, unknown> {
  return {
    x: 1,
    get a(): number {
      throw boom;
    },
  };
}

describe("unreadable", () => {
  it("names the place and how, the error thrown the cause", () => {
    const err = unreadable("f: value.b", GETTER_THREW, boom);
    expect(err).toEqual(new TypeError("f: value.b cannot be read (a getter threw): Error: boom"));
    expect(err.cause).toBe(boom);
  });
});

describe("a getter that throws, in a call's value", () => {
  // Over TCP as in process: the client's own walks read the values (the
  // arguments, the future searches; a scattered value's check before it is
  // sent), not the transport's encoder, whose error said neither call nor place.
  for (const protocol of ["inproc", "tcp"] as const) {
    it(`is refused naming the call and where it sits, the getter's error the cause (${protocol})`, async () => {
      const { client } = await testCluster({ protocol });
      const refusals: [() => unknown, string][] = [
        [() => client.submit(identity, { a: [1, throwing()] }), "submit(identity): args[0].a[1].b"],
        [() => client.submit(identity, throwingArray()), "submit(identity): args[0][0]"],
        [
          () => client.submitWith({ key: "k" }, identity, { a: throwing() }),
          "submitWith(identity): args[0].a.b",
        ],
        [() => client.map(identity, [1, { a: throwing() }]), "map(identity), item 1: args[0].a.b"],
        [
          () => client.compute({ x: ["identity", { a: throwing() }] }, { keys: ["x"] }),
          'compute: graph key "x": args[0].a.b',
        ],
        [() => client.variable("v").set({ a: [1, throwing()] }), "Variable.set: value.a[1].b"],
        [() => client.queue("q").put({ a: throwingArray() }), "Queue.put: value.a[0]"],
        [() => client.publishDataset("d", { a: [throwing()] }), "publishDataset: value.a[0].b"],
        [() => client.gather({ a: throwing() } as never), "gather: value.a.b"],
        [() => client.logEvent("t", [{ m: throwing() }]), "logEvent: value[0].m.b"],
        [
          () => client.scatter([[1, throwing()]]),
          "scatter: value 0 (Array) cannot be sent to a worker: value 0[1].b",
        ],
        [
          () => client.scatter([1, { a: throwingArray() }]),
          "scatter: value 1 (Object) cannot be sent to a worker: value 1.a[0]",
        ],
        [() => client.scatter(throwingNamed()), "scatter: values.a"],
        [() => client.scatter(throwingArray()), "scatter: values[0]"],
      ];
      for (const [call, where] of refusals) {
        const err = await (async () => call())().then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toEqual(new TypeError(`${where} cannot be read (a getter threw): Error: boom`));
        expect((err as Error).cause).toBe(boom);
      }
      // Nothing was scattered: the call still works.
      const [f] = await client.scatter([{ n: 1 }]);
      expect(await f.result()).toEqual({ n: 1 });
    });
  }
});
