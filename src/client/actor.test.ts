import { deserialize, serialize } from "node:v8";
import { describe, expect, it } from "vitest";
import { ClonedValue } from "../comm/clonedValue.ts";
import { MessageTooLargeError, SerializationError } from "../comm/errors.ts";
import { decodeMessage, encodeMessage } from "../comm/wireCodec.ts";
import { type ActorOp, actorRef, isActorRef } from "../protocol/actors.ts";
import { MAX_ARG_DEPTH, taskRef } from "../protocol/messagesTaskSpec.ts";
import { Actor, ActorError, type ActorHost, bindActorRefs } from "./actor.ts";
import { argsWithRefs } from "./taskArgs.ts";

interface Sent {
  readonly address: string;
  readonly op: ActorOp;
  readonly args: Record<string, unknown>;
}

/** A host answering every call with `answer(sent)`, recording what was sent. */
function fakeHost(answer: (s: Sent) => unknown): { host: () => Promise<ActorHost>; sent: Sent[] } {
  const sent: Sent[] = [];
  const h: ActorHost = {
    callActor: async (address, op, args) => {
      const s = { address, op, args };
      sent.push(s);
      return answer(s);
    },
  };
  return { host: () => Promise.resolve(h), sent };
}

interface Thing {
  size: number;
  grow(by: number, label: string): number;
  partner(): Actor<Thing>;
}

const REF = actorRef("thing-1", "tcp://w:1");

describe("Actor", () => {
  it("sends a method call to the holding worker and resolves with its result", async () => {
    const { host, sent } = fakeHost(() => ({ status: "OK", result: new ClonedValue(7) }));
    const thing = new Actor<Thing>(REF, host);
    expect(await thing.call("grow", 2, "x")).toBe(7);
    expect(sent).toHaveLength(1);
    expect(sent[0].address).toBe("tcp://w:1");
    expect(sent[0].op).toBe("actor_execute");
    expect(sent[0].args.actor).toBe("thing-1");
    expect(sent[0].args.function).toBe("grow");
    expect((sent[0].args.args as unknown[]).map((a) => ClonedValue.unwrap(a))).toEqual([2, "x"]);
  });

  it("reads a field with actor_attribute", async () => {
    const { host, sent } = fakeHost(() => ({ status: "OK", result: 3 }));
    expect(await new Actor<Thing>(REF, host).get("size")).toBe(3);
    expect(sent[0].op).toBe("actor_attribute");
    expect(sent[0].args).toEqual({ actor: "thing-1", attribute: "size" });
  });

  it("makes a handle of an ActorRef in a result, calling through the same host", async () => {
    const other = actorRef("thing-2", "tcp://w:2");
    const { host, sent } = fakeHost((s) =>
      s.args.function === "partner" ? { status: "OK", result: other } : { status: "OK", result: 1 },
    );
    const partner = await new Actor<Thing>(REF, host).call("partner");
    expect(partner).toBeInstanceOf(Actor);
    expect(partner.address).toBe("tcp://w:2");
    await partner.call("grow", 1, "y");
    expect(sent[1].address).toBe("tcp://w:2");
  });

  it("rejects with an ActorError: the method threw, the worker is unreachable, or the answer is malformed", async () => {
    const threw = fakeHost(() => ({
      status: "error",
      exceptionText: "RangeError: too big",
      tracebackText: "    at grow",
    }));
    const err = await new Actor<Thing>(REF, threw.host).call("grow", 1e9, "z").catch((e) => e);
    expect(err).toBeInstanceOf(ActorError);
    expect(err.message).toBe("actor thing-1: RangeError: too big");
    expect(err.tracebackText).toBe("    at grow");

    const unreachable = () => Promise.reject(new Error("connection refused"));
    await expect(new Actor<Thing>(REF, unreachable).get("size")).rejects.toThrow(
      "actor thing-1: cannot reach the actor's worker tcp://w:1: connection refused",
    );

    const odd = fakeHost(() => ({ status: "maybe" }));
    await expect(new Actor<Thing>(REF, odd.host).get("size")).rejects.toThrow(
      'malformed answer to actor_attribute: {"status":"maybe"}',
    );
  });

  it("refuses an empty method or field name before sending anything", async () => {
    const { host, sent } = fakeHost(() => ({ status: "OK", result: 1 }));
    const thing = new Actor<Thing>(REF, host);
    await expect(thing.call("" as "grow", 1, "x")).rejects.toBeInstanceOf(TypeError);
    await expect(thing.get("" as "size")).rejects.toBeInstanceOf(TypeError);
    expect(sent).toHaveLength(0);
  });

  it("an error answer without its exception text is malformed", async () => {
    const odd = fakeHost(() => ({ status: "error" }));
    await expect(new Actor<Thing>(REF, odd.host).get("size")).rejects.toThrow(
      'malformed answer to actor_attribute: {"status":"error"}',
    );
  });

  it("a request that cannot be encoded or is too large is said so, not taken for an unreachable worker", async () => {
    const encode = () =>
      Promise.resolve<ActorHost>({
        callActor: () => Promise.reject(new SerializationError("bad bytes")),
      });
    const encodeErr = await new Actor<Thing>(REF, encode).get("size").catch((e: unknown) => e);
    expect(encodeErr).toBeInstanceOf(TypeError);
    expect((encodeErr as Error).message).toBe(
      "actor_attribute of actor thing-1: cannot be sent: bad bytes",
    );

    const tooLarge = () =>
      Promise.resolve<ActorHost>({
        callActor: () => Promise.reject(new MessageTooLargeError(100, 10, "send")),
      });
    const largeErr = await new Actor<Thing>(REF, tooLarge).get("size").catch((e: unknown) => e);
    expect(largeErr).toBeInstanceOf(ActorError);
    expect((largeErr as Error).message).toMatch(
      /^actor thing-1: MessageTooLargeError: cannot send/,
    );
  });

  it("releases what keeps the actor alive once, however often the handle is released", () => {
    const { host } = fakeHost(() => null);
    let releases = 0;
    const thing = new Actor<Thing>(REF, host, { release: () => void releases++ });
    thing.release();
    thing.release();
    expect(releases).toBe(1);
  });

  it("travels as its ActorRef alone: cloned, encoded for the wire, or as a task argument", () => {
    const { host } = fakeHost(() => null);
    const thing = new Actor<Thing>(REF, host);
    expect(isActorRef(thing)).toBe(true);
    const cloned = deserialize(serialize(thing));
    expect(cloned).toEqual(REF);
    expect(cloned).not.toBeInstanceOf(Actor);
    const { buffers, payload } = encodeMessage({ value: thing });
    expect((decodeMessage(payload, buffers) as { value: unknown }).value).toEqual(REF);

    // As a task's argument it is a reference to the actor task: a dependency.
    const deps = new Set<string>();
    const args = argsWithRefs([{ t: thing }, [thing]], deps, {}, "submit(test)");
    expect(args).toEqual([{ t: taskRef("thing-1") }, [taskRef("thing-1")]]);
    expect([...deps]).toEqual(["thing-1"]);
  });
});

describe("bindActorRefs", () => {
  it("makes handles of the refs in arrays and plain objects, sharing what holds none", () => {
    const { host } = fakeHost(() => null);
    const plain = { a: [1, 2], b: { c: "x" } };
    const value = { plain, list: [REF, 3], nested: { deep: REF } };
    const bound = bindActorRefs(value, host) as typeof value;
    expect(bound).not.toBe(value);
    expect(bound.plain).toBe(plain);
    expect(bound.list[0]).toBeInstanceOf(Actor);
    expect(bound.nested.deep).toBeInstanceOf(Actor);
    expect(value.list[0]).toBe(REF);
    expect(bindActorRefs(plain, host)).toBe(plain);
    expect(bindActorRefs(REF, host)).toBeInstanceOf(Actor);
    // A Map is not searched (as task arguments are not).
    const m = new Map([["r", REF]]);
    expect(bindActorRefs(m, host)).toBe(m);
    // Nor is a class instance; a null-prototype object is, as a plain one.
    class Box {
      r = REF;
    }
    const box = new Box();
    expect(bindActorRefs(box, host)).toBe(box);
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { r: REF });
    expect((bindActorRefs(bare, host) as Record<string, unknown>).r).toBeInstanceOf(Actor);
  });

  it("searches MAX_ARG_DEPTH levels deep, no deeper", () => {
    const { host } = fakeHost(() => null);
    const nest = (levels: number): unknown => {
      let v: unknown = REF;
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };
    const unwrap = (v: unknown, levels: number): unknown => {
      let out = v;
      for (let i = 0; i < levels; i++) out = (out as unknown[])[0];
      return out;
    };
    expect(unwrap(bindActorRefs(nest(MAX_ARG_DEPTH), host), MAX_ARG_DEPTH)).toBeInstanceOf(Actor);
    const tooDeep = nest(MAX_ARG_DEPTH + 1);
    expect(bindActorRefs(tooDeep, host)).toBe(tooDeep);
  });
});
