import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ClonedValue } from "../comm/clonedValue.ts";
import type { Comm } from "../comm/comm.ts";
import type { RpcContext } from "../comm/rpc.ts";
import { DataServer, getDataArgs, parseGetDataResponse } from "./dataServer.ts";
import { SpilledValueLostError } from "./spilledValueLost.ts";
import { SpillStore } from "./spillStore.ts";
import { UpdateDataEvent } from "./state/events.ts";
import { WorkerState } from "./state/workerState.ts";

function host(address: string, paused = false) {
  const state = new WorkerState({ address, validate: true });
  state.handleStimulus(new UpdateDataEvent({ data: { a: 1, b: "two" }, stimulusId: "scatter" }));
  return { state, isPausedForMemory: paused };
}

/** A context whose answer is never sent (until `send()`): the transfer stays open. */
/**
 * A worker's state machine holding `a` (1 byte) in memory and `big` (100 bytes)
 * spilled to `dir`, over a store keeping 10 bytes in memory.
 */
function spilledBig(dir: string) {
  const sizeof = (v: unknown) => (typeof v === "number" ? 1 : 100);
  const data = new SpillStore({ targetBytes: 10, directory: dir, sizeof });
  const state = new WorkerState({ address: "tcp://10.0.0.1:1", validate: true, data });
  const value = { big: "x".repeat(100) };
  state.handleStimulus(new UpdateDataEvent({ data: { a: 1, big: value }, stimulusId: "s" }));
  return { data, state, value };
}

function ctxFrom(peerAddress: string) {
  const callbacks: ((ok: boolean) => void)[] = [];
  const ctx: RpcContext = {
    comm: { peerAddress } as Comm,
    afterReply: (cb) => callbacks.push(cb),
  };
  const send = () => {
    for (const cb of callbacks.splice(0)) cb(true);
  };
  return { ctx, send };
}

describe("DataServer", () => {
  it("counts the bytes of an answer while it is sent, and in the total after", () => {
    const h = host("tcp://10.0.0.1:1");
    const server = new DataServer(h, 4);
    const expected = (h.state.tasks.get("a")?.nbytes ?? 0) + (h.state.tasks.get("b")?.nbytes ?? 0);
    expect(expected).toBeGreaterThan(0);
    const { ctx, send } = ctxFrom("tcp://10.0.0.2:5");
    server.getData({ keys: ["a", "b", "zzz"] }, ctx);
    expect(server.outgoingBytes).toBe(expected);
    send();
    expect(server.outgoingBytes).toBe(0);
    expect(server.outgoingBytesTotal).toBe(expected);
  });

  it("serves no actor whose task is not in memory here", () => {
    const h = host("tcp://10.0.0.1:1");
    h.state.actors.set("act", { n: 1 });
    const server = new DataServer(h, 4);
    const answer = server.getData({ keys: ["act", "a"] }, ctxFrom("tcp://10.0.0.2:5").ctx);
    expect(answer.status === "OK" && [...answer.data.keys()]).toEqual(["a"]);
  });

  it("answers with the keys it holds", () => {
    const server = new DataServer(host("tcp://10.0.0.1:1"), 4);
    const { ctx, send } = ctxFrom("tcp://10.0.0.2:5");
    expect(server.getData({ keys: ["a", "b", "zzz"] }, ctx)).toEqual({
      status: "OK",
      data: new Map<string, unknown>([
        ["a", 1],
        ["b", new ClonedValue("two")],
      ]),
    });
    expect(server.outgoingCount).toBe(1);
    send();
    expect(server.outgoingCount).toBe(0);
    expect(server.outgoingCountTotal).toBe(1);
  });

  it("answers busy beyond the limit of concurrent answers", () => {
    const server = new DataServer(host("tcp://10.0.0.1:1"), 2);
    const other = "tcp://10.0.0.2:5";
    const pending = [ctxFrom(other), ctxFrom(other)];
    for (const p of pending) expect(server.getData({ keys: ["a"] }, p.ctx).status).toBe("OK");
    expect(server.getData({ keys: ["a"] }, ctxFrom(other).ctx)).toEqual({ status: "busy" });
    expect(server.busyCountTotal).toBe(1);
    pending[0].send();
    expect(server.getData({ keys: ["a"] }, ctxFrom(other).ctx).status).toBe("OK");
  });

  it("allows twice the limit to peers on the same host, and one while paused for memory", () => {
    const server = new DataServer(host("tcp://10.0.0.1:1"), 1);
    const same = "tcp://10.0.0.1:7";
    expect(server.getData({ keys: ["a"] }, ctxFrom(same).ctx).status).toBe("OK");
    expect(server.getData({ keys: ["a"] }, ctxFrom(same).ctx).status).toBe("OK");
    expect(server.getData({ keys: ["a"] }, ctxFrom(same).ctx).status).toBe("busy");
    const paused = new DataServer(host("tcp://10.0.0.1:1", true), 4);
    expect(paused.getData({ keys: ["a"] }, ctxFrom(same).ctx).status).toBe("OK");
    expect(paused.getData({ keys: ["a"] }, ctxFrom(same).ctx).status).toBe("busy");
  });

  it("leaves out a key whose spilled value is gone from disk, and tells the worker", () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-data-server-"));
    try {
      const { data, state, value } = spilledBig(dir);
      const [own] = readdirSync(dir);
      const [file] = readdirSync(join(dir, own));
      rmSync(join(dir, own, file));
      state.handleStimulus(new UpdateDataEvent({ data: { big2: value }, stimulusId: "s2" }));
      const told: SpilledValueLostError[] = [];
      const server = new DataServer(
        { state, isPausedForMemory: false, valueLost: (err) => told.push(err) },
        4,
      );
      const { ctx, send } = ctxFrom("tcp://10.0.0.2:5");
      // As a worker that no longer holds it answers: the requester asks elsewhere. Named
      // lost: a client waits for it to be computed again rather than give it up.
      const answer = server.getData({ keys: ["a", "big"] }, ctx);
      expect(answer.status === "OK" && [...answer.data.keys()]).toEqual(["a"]);
      expect(answer.status === "OK" && answer.lost).toEqual(["big"]);
      const parsed = parseGetDataResponse(answer, new Set(["a", "big"]), "tcp://10.0.0.1:1");
      expect(parsed.status === "OK" && parsed.lost).toEqual(["big"]);
      expect(told).toHaveLength(1);
      expect(told[0]).toBeInstanceOf(SpilledValueLostError);
      expect(told[0].key).toBe("big");
      // Only the bytes sent are counted.
      expect(server.outgoingBytes).toBe(state.tasks.get("a")?.nbytes);
      send();
      // Another error of the store is not taken for a loss: the request fails with it.
      data.close();
      expect(() => server.getData({ keys: ["big2"] }, ctxFrom("tcp://10.0.0.2:5").ctx)).toThrow(
        /SpillStore: closed; big2 was on disk/,
      );
      expect(told).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("rejects malformed requests", () => {
    const server = new DataServer(host("tcp://10.0.0.1:1"), 1);
    expect(() => server.getData({ keys: [1] }, ctxFrom("x").ctx)).toThrow(
      /keys must be an array of strings/,
    );
    expect(() => server.getData({ keys: ["a"], peer: "yes" }, ctxFrom("x").ctx)).toThrow(
      'get_data: peer must be a boolean, got "yes"',
    );
    expect(server.outgoingCount).toBe(0);
  });

  it("getDataArgs says the requesting comm's own limit, where it has one", () => {
    expect(getDataArgs(["a"], "w", { maxMessageBytes: 1000 } as Comm, true)).toEqual({
      keys: ["a"],
      peer: true,
      who: "w",
      maxMessageBytes: 1000,
    });
    expect(getDataArgs(["a"], "c", {} as Comm, false)).toEqual({
      keys: ["a"],
      peer: false,
      who: "c",
    });
  });
});

describe("parseGetDataResponse", () => {
  const wanted = new Set(["a"]);
  it("keeps only requested keys, from a Map or an object", () => {
    expect(
      parseGetDataResponse(
        {
          status: "OK",
          data: new Map([
            ["a", 1],
            ["x", 2],
          ]),
        },
        wanted,
        "p",
      ),
    ).toEqual({
      status: "OK",
      data: new Map([["a", 1]]),
    });
    expect(parseGetDataResponse({ status: "OK", data: { a: 1, x: 2 } }, wanted, "p")).toEqual({
      status: "OK",
      data: new Map([["a", 1]]),
    });
    expect(parseGetDataResponse({ status: "busy" }, wanted, "p")).toEqual({ status: "busy" });
  });
  it("unwraps cloned values", () => {
    const value = { v: 1 };
    const data = new Map([["a", new ClonedValue(value)]]);
    const parsed = parseGetDataResponse({ status: "OK", data }, wanted, "p");
    expect(parsed.status === "OK" && parsed.data.get("a")).toBe(value);
  });
  it("throws for anything else", () => {
    expect(() => parseGetDataResponse(null, wanted, "p")).toThrow(/not an object/);
    expect(() => parseGetDataResponse({ status: "OK", data: [1] }, wanted, "p")).toThrow(
      /data is not a map/,
    );
    expect(() => parseGetDataResponse({ status: "nope" }, wanted, "p")).toThrow(/status "nope"/);
    // The peer's answer is shown whatever it holds (msgpack carries BigInts).
    expect(() => parseGetDataResponse({ status: 7n }, wanted, "p")).toThrow(
      'unexpected get_data answer from p: status "7n"',
    );
  });
});

describe("DataServer, a lost value its worker holds for tasks that may wait for the peer's", () => {
  it("fails a peer's fetch of only such values with the loss, and answers anyone else without them", () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-data-server-"));
    try {
      const { state } = spilledBig(dir);
      for (const d of readdirSync(dir)) rmSync(join(dir, d), { recursive: true });
      const asked: string[] = [];
      const server = new DataServer(
        {
          state,
          isPausedForMemory: false,
          failsPeer: (err) => {
            asked.push(err.key);
            return true;
          },
        },
        4,
      );
      const ctx = () => ctxFrom("tcp://10.0.0.2:5").ctx;
      // A worker asking for it alone: its fetch fails, so the tasks there needing it err.
      expect(() => server.getData({ keys: ["big"], who: "tcp://10.0.0.2:5" }, ctx())).toThrow(
        /the spilled value of "big" is gone from disk/,
      );
      expect(asked).toEqual(["big"]);
      expect(server.outgoingCount).toBe(0);
      // With another key, which it gets (an error answer would fail its fetch too): without it.
      const mixed = server.getData({ keys: ["a", "big"], who: "inproc://10.0.0.2/7/1" }, ctx());
      expect(mixed).toMatchObject({ status: "OK", lost: ["big"] });
      // A client (its id, not an address) waits for the value to be computed again.
      const client = server.getData({ keys: ["big"], who: "client-1234abcd" }, ctx());
      expect(client).toMatchObject({ status: "OK", lost: ["big"] });
      expect(asked).toEqual(["big", "big"]);
      // Told apart by `peer` where the requester says it: a client named like an
      // address waits, and a worker is a peer whatever its `who`.
      const named = server.getData(
        { keys: ["big"], who: "tcp://10.0.0.9:4000-1", peer: false },
        ctx(),
      );
      expect(named).toMatchObject({ status: "OK", lost: ["big"] });
      expect(() => server.getData({ keys: ["big"], who: "w", peer: true }, ctx())).toThrow(
        /the spilled value of "big" is gone from disk/,
      );
      expect(asked).toEqual(["big", "big", "big"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
