import { describe, expect, it } from "vitest";
import type { PeerPool } from "../worker/peerPool.ts";
import { Gatherer, type GatherHost } from "./gatherer.ts";

/** A host whose one worker answers `busy` `busyTimes` times, then with the value. */
function busyHost(busyTimes: number) {
  let calls = 0;
  const rpc = {
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
});
