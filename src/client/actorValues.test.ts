/**
 * Values to and from actors follow the same rules on every path: in process
 * (an in-process cluster, where the caller and the actor share a heap) as
 * over TCP, arguments and results are copies, and what is not data is
 * refused with an error naming the method and the value's place.
 */

import { afterEach, describe, expect, it } from "vitest";
import { type Actor, ActorError } from "./actor.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "./testCluster.ts";
import {
  fickle,
  type Keeper,
  keeper,
  keepFromTask,
  VALUE_TEST_TASKS,
  Vec,
} from "./valueTestTasks.ts";

afterEach(closeTestClusters);

async function keeperOn(
  protocol: "inproc" | "tcp",
  executor: "inline" | "threads" = "inline",
): Promise<Actor<Keeper>> {
  const { client } = await testCluster({
    protocol,
    executor,
    workers: 1,
    taskModules: [CLIENT_TEST_TASKS, VALUE_TEST_TASKS],
  });
  return client.submitWith({ actor: true }, keeper).result();
}

describe("actor values", () => {
  for (const protocol of ["inproc", "tcp"] as const) {
    it(`arguments and results are copies: neither side sees the other's later changes (${protocol})`, async () => {
      const handle = await keeperOn(protocol);
      const sent = [1, { a: 2 }];
      // Taken at the call, as a task's arguments are at submit: not when sent, later.
      const kept = handle.call("keep", sent);
      sent.push(99);
      (sent[1] as { a: number }).a = 99;
      expect(await kept).toBe("kept");
      expect(await handle.call("held")).toEqual([1, { a: 2 }]);

      const got = (await handle.call("held")) as unknown[];
      got.push("mine");
      expect(await handle.call("push", 3)).toBe(3);
      expect(got).toEqual([1, { a: 2 }, "mine"]);
      expect(await handle.get("kept")).toEqual([1, { a: 2 }, 3]);
    });

    it(`an argument that is not data is refused, naming the method and the argument (${protocol})`, async () => {
      const handle = await keeperOn(protocol);
      const untyped = handle as unknown as Actor<Record<string, (...a: unknown[]) => unknown>>;
      const deep = (levels: number): unknown => {
        let v: unknown = 1;
        for (let i = 0; i < levels; i++) v = [v];
        return v;
      };
      const cases: [unknown[], RegExp][] = [
        [[{ f: () => 1 }], /call\("keep"\) of actor keeper-[\w-]+: args\[0\]\.f is a function; /],
        [[1, [Symbol("s")]], /call\("keep"\) of actor .*: args\[1\]\[0\] is a symbol; /],
        [[new Vec(1, 2)], /: args\[0\] is a Vec \(an instance of a class/],
        [[new URL("http://a/")], /: args\[0\] is a URL /],
        [[new SharedArrayBuffer(4)], /: args\[0\] is a SharedArrayBuffer/],
        [[deep(5000)], /: args\[0\](\[0\])+ is nested deeper than 1000 /],
      ];
      for (const [args, message] of cases) {
        const err = await untyped.call("keep", ...args).catch((e: unknown) => e);
        expect(err, String(message)).toBeInstanceOf(TypeError);
        expect((err as Error).message).toMatch(message);
        expect((err as Error).message).toMatch(/actor arguments must be data/);
        expect((err as Error).message).not.toMatch(/cannot reach/);
      }
      // Nothing was sent: the actor still holds its first value.
      expect(await handle.get("kept")).toBeNull();
    });

    it(`an argument whose getter throws is refused naming where, the getter's error the cause (${protocol})`, async () => {
      const handle = await keeperOn(protocol);
      const boom = new Error("boom");
      const arg = {
        get a(): number {
          throw boom;
        },
      };
      const err = await handle.call("keep", [1, arg]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TypeError);
      expect((err as Error).message).toMatch(
        /^call\("keep"\) of actor keeper-[\w-]+: args\[0\]\[1\]\.a cannot be read \(a getter threw\): Error: boom$/,
      );
      expect((err as Error).cause).toBe(boom);
      expect(await handle.get("kept")).toBeNull();
    });

    it(`a result that is not data fails the call with an ActorError naming the method (${protocol})`, async () => {
      const handle = await keeperOn(protocol);
      const cases: [keyof Keeper, RegExp][] = [
        ["vec", /^DataCloneError: the result of Keeper\.vec\(\) cannot be sent: result is a Vec /],
        [
          "self",
          /^DataCloneError: the result of Keeper\.self\(\) cannot be sent: result is a Keeper /,
        ],
        ["callback", /^DataCloneError: .*Keeper\.callback\(\).*: result\.f is a function; /],
      ];
      for (const [method, message] of cases) {
        const err = await (handle as unknown as Actor<Record<string, () => unknown>>)
          .call(method)
          .catch((e: unknown) => e);
        expect(err, method).toBeInstanceOf(ActorError);
        expect((err as ActorError).exceptionText, method).toMatch(message);
        expect((err as ActorError).exceptionText, method).not.toMatch(/cannot reach/);
      }
      await handle.call("keep", new Map([[1, 2]]));
      expect(await handle.call("held")).toEqual(new Map([[1, 2]]));
      // A field that is not data, the same.
      await handle.call("keepVec");
      const err = await handle.get("kept").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ActorError);
      expect((err as ActorError).exceptionText).toMatch(
        /^DataCloneError: field "kept" of Keeper cannot be sent: result is a Vec /,
      );
    });

    it(`a value is read once, at the call; one that cannot be cloned after all is named, never taken for an unreachable worker (${protocol})`, async () => {
      const handle = await keeperOn(protocol);
      const untyped = handle as unknown as Actor<Record<string, (...a: unknown[]) => unknown>>;
      // Read once, as a clone reads it: what it gave then is what the actor gets.
      expect(await untyped.call("keep", fickle())).toBe("kept");
      expect(await handle.get("kept")).toEqual({ x: 1 });
      // In a Map, the check reads it, then the clone, which fails: named as the call's.
      const err = await untyped
        .call("keep", 1, new Map([["k", fickle()]]))
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TypeError);
      expect((err as Error).message).toMatch(
        /^call\("keep"\) of actor keeper-[\w-]+: args\[1\] cannot be sent: .*could not be cloned/,
      );
      expect(await handle.get("kept")).toEqual({ x: 1 });
      // A result the same: an ActorError saying it could not be cloned.
      const back = await handle.call("fickleInMap").catch((e: unknown) => e);
      expect(back).toBeInstanceOf(ActorError);
      expect((back as ActorError).exceptionText).toMatch(
        protocol === "inproc"
          ? /^DataCloneError: the result of Keeper\.fickleInMap\(\) cannot be sent: .*could not be cloned/
          : /^SerializationError: .*could not be cloned/,
      );
      expect((back as ActorError).exceptionText).not.toMatch(/cannot reach/);
      expect(await handle.call("keep", 2)).toBe("kept");
    });
  }

  for (const protocol of ["inproc", "tcp"] as const) {
    it(`a task on a pool thread calls an actor by the same rules (threads, ${protocol})`, async () => {
      const { client } = await testCluster({
        protocol,
        executor: "threads",
        workers: 1,
        taskModules: [CLIENT_TEST_TASKS, VALUE_TEST_TASKS],
      });
      const handle = await client.submitWith({ actor: true }, keeper).result();
      const outcomes = await client.submit(keepFromTask, handle, { a: 1 });
      expect(outcomes[0]).toEqual({ ok: "kept" });
      expect(outcomes[1]).toEqual({
        error: expect.stringMatching(/^TypeError: call\("keep"\) of actor .*: args\[0\] is a Vec /),
      });
      expect(await handle.call("held")).toEqual([{ a: 1 }]);
    });
  }
});
