import { describe, expect, it } from "vitest";
import { actorRef } from "../protocol/actors.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { Actor } from "./actor.ts";
import { Gatherer, type GatherHost } from "./gatherer.ts";

/** A host whose one worker answers `busy` `busyTimes` times, then with the value. */
function busyHost(busyTimes: number) {
  let calls = 0;
  const rpc = {
    comm: {},
    call: async (_op: string, args: { keys: string[] }) => {
      calls++;
      if (calls <= busyTimes) return { status: "busy" };
      return { status: "OK", data: new Map(args.keys.map((k) => [k, `value of ${k}`])) };
    },
  };
  const host: GatherHost = {
    id: "client-test",
    peers: { get: async () => rpc } as unknown as PeerPool,
    holdersOf: () => ["tcp://w:1"],
    whoHas: async (keys) => Object.fromEntries(keys.map((k) => [k, ["tcp://w:1"]])),
    actorHandle: (ref) =>
      new Actor(ref, async () => ({
        callActor: async (address, op, args) => ({ status: "OK", result: { address, op, args } }),
      })),
  };
  return { host, calls: () => calls };
}

describe("Gatherer", () => {
  it("waits for a worker that stays busy (sending other results) instead of calling the key lost", async () => {
    // 30 busy answers: more than the rounds allowed for keys that cannot be found.
    const { host, calls } = busyHost(30);
    const g = new Gatherer(host);
    await expect(g.fetch("x")).resolves.toBe("value of x");
    expect(calls()).toBe(31);
  }, 10_000);

  it("makes an actor's result a handle whose calls go through the client", async () => {
    const { host } = busyHost(0);
    const ref = actorRef("counter-1", "tcp://w:1");
    const rpc = {
      comm: {},
      call: async () => ({ status: "OK", data: new Map([["counter-1", ref]]) }),
    };
    const g = new Gatherer({ ...host, peers: { get: async () => rpc } as unknown as PeerPool });
    const handle = (await g.fetch("counter-1")) as Actor<{ inc(by: number): number }>;
    expect(handle).toBeInstanceOf(Actor);
    expect(handle.key).toBe("counter-1");
    // The fake client echoes what it was asked to send.
    const sent = (await handle.call("inc", 2)) as unknown as Record<string, unknown>;
    expect(sent.address).toBe("tcp://w:1");
    expect(sent.op).toBe("actor_execute");
  });
});
