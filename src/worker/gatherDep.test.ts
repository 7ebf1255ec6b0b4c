import pino from "pino";
import { describe, expect, it } from "vitest";
import type { RpcClient } from "../comm/rpc.ts";
import type { AsyncInstructionContext } from "./baseWorker.ts";
import { type GatherHost, gatherFromPeer, transferCause } from "./gatherDep.ts";
import { ANSWER_OVERHEAD_BYTES, ENTRY_OVERHEAD_BYTES } from "./getDataParts.ts";
import type { PeerPool } from "./peerPool.ts";
import type { StartStop, TaskState } from "./state/taskState.ts";

const PEER = "tcp://10.0.0.2:5";
/** Each value's expected size here. */
const NBYTES = 100;
/** A limit that takes exactly one one-letter key per answer. */
const ONE_KEY = ANSWER_OVERHEAD_BYTES + 1 + NBYTES + ENTRY_OVERHEAD_BYTES;

/** A host whose peer answers `get_data` with `answer(keys)`; each answer takes 5 s of wall clock. */
function fakeHost(o: {
  ownLimit?: number;
  peerLimit?: number;
  answer: (keys: string[]) => unknown;
}) {
  const requests: string[][] = [];
  const transfers: [string[], StartStop][] = [];
  let wall = 100;
  const client = {
    comm: { maxMessageBytes: o.ownLimit },
    call: async (op: string, args: { keys: string[] }) => {
      expect(op).toBe("get_data");
      requests.push(args.keys);
      wall += 5;
      return o.answer(args.keys);
    },
  } as unknown as RpcClient;
  const peers = {
    get: async () => client,
    limitOf: (address: string) => (address === PEER ? o.peerLimit : undefined),
  } as unknown as PeerPool;
  const host: GatherHost = {
    peers,
    logger: pino({ level: "silent" }),
    address: () => "tcp://10.0.0.1:1",
    now: () => 0,
    wallNow: () => wall,
    transferred: (keys, ss) => transfers.push([[...keys], ss]),
    nbytesOf: () => NBYTES,
  };
  return { host, requests, transfers };
}

function ctxOf(signal = new AbortController().signal): AsyncInstructionContext {
  return { signal, ledger: { record: () => {} } };
}

const echo = (keys: string[]) => ({
  status: "OK",
  data: new Map(keys.map((k) => [k, `v-${k}`])),
});

describe("gatherFromPeer", () => {
  it("splits the request to fit the peer's limit when this end has none", async () => {
    const { host, requests } = fakeHost({ peerLimit: ONE_KEY, answer: echo });
    const ev = await gatherFromPeer(host, PEER, new Set(["a", "b", "c"]), 300, ctxOf());
    expect(requests).toEqual([["a"], ["b"], ["c"]]);
    expect(ev.cls).toBe("GatherDepSuccessEvent");
    expect(ev.cls === "GatherDepSuccessEvent" && [...ev.data.keys()]).toEqual(["a", "b", "c"]);
  });

  it("takes from each answer only the keys of its own part", async () => {
    const { host } = fakeHost({
      ownLimit: ONE_KEY,
      // The answer for a also carries a value for b; the answer for b then has none.
      answer: (keys) =>
        keys[0] === "a"
          ? {
              status: "OK",
              data: new Map<string, unknown>([
                ["a", 1],
                ["b", "stray"],
              ]),
            }
          : { status: "OK", data: new Map() },
    });
    const ev = await gatherFromPeer(host, PEER, new Set(["a", "b"]), 200, ctxOf());
    expect(ev.cls === "GatherDepSuccessEvent" && Object.fromEntries(ev.data)).toEqual({ a: 1 });
  });

  it("records the transfer from before the request to after the answer", async () => {
    const { host, transfers } = fakeHost({ answer: echo });
    await gatherFromPeer(host, PEER, new Set(["a", "b"]), 200, ctxOf());
    expect(transfers).toEqual([
      [["a", "b"], { action: "transfer", start: 100, stop: 105, source: PEER }],
    ]);
  });

  it("rejects with the abort's reason, rather than report a failure, when aborted", async () => {
    const { host } = fakeHost({ answer: () => new Promise(() => {}) });
    const ac = new AbortController();
    const closed = new Error("worker closed");
    const p = gatherFromPeer(host, PEER, new Set(["a"]), 100, ctxOf(ac.signal));
    ac.abort(closed);
    await expect(p).rejects.toBe(closed);
  });
});

describe("transferCause", () => {
  const task = (key: string, dependents: TaskState[] = []) =>
    ({ key, dependents: new Set(dependents) }) as unknown as TaskState;

  it("is a dependent of the first key that has one, else the last known key", () => {
    const d = task("d");
    const tasks = new Map([
      ["x", task("x")],
      ["y", task("y", [d])],
      ["z", task("z")],
    ]);
    expect(transferCause({ tasks }, ["x", "y", "z"])?.key).toBe("d");
    expect(transferCause({ tasks }, ["x", "z", "gone"])?.key).toBe("z");
    expect(transferCause({ tasks }, ["gone"])).toBeUndefined();
  });
});
