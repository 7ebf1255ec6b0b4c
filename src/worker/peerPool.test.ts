import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { Comm, Listener } from "../comm/comm.ts";
import { listen } from "../comm/connect.ts";
import { CommClosedError, isDataError, isNetworkError } from "../comm/errors.ts";
import { type RpcHandler, serveRpc } from "../comm/rpc.ts";
import { muteServer } from "../comm/testMuteServer.ts";
import { testTls } from "../comm/testTls.ts";
import { PeerPool } from "./peerPool.ts";

const listeners: Listener[] = [];
const comms: Comm[] = [];
const pools: PeerPool[] = [];

afterEach(async () => {
  for (const p of pools.splice(0)) await p.closeAll();
  for (const c of comms.splice(0)) c.abort();
  for (const l of listeners.splice(0)) await l.close();
});

/** A peer answering `handlers` over TCP. */
async function peer(handlers: Record<string, RpcHandler>): Promise<string> {
  const l = await listen("tcp://127.0.0.1:0", (comm) => {
    comms.push(comm);
    void serveRpc(comm, handlers);
  });
  listeners.push(l);
  return l.address;
}

function pool(connectTimeoutMs = 5000): PeerPool {
  const p = new PeerPool({ connectTimeoutMs });
  pools.push(p);
  return p;
}

const echo: RpcHandler = (args) => args.text;

/** `err` is the network failure of a get whose connection remove() cut, saying why; the pool keeps nothing. */
function expectCutAsLeft(err: unknown, address: string, peers: PeerPool): void {
  expect(err).toBeInstanceOf(CommClosedError);
  expect(isNetworkError(err)).toBe(true);
  expect((err as Error).message).toContain(`${address} left the cluster`);
  expect(peers.size).toBe(0);
}

describe("PeerPool", () => {
  it("asks a peer its identity and sends it nothing larger than it reads", async () => {
    const address = await peer({
      identity: () => ({ type: "Worker", maxMessageBytes: 10_000 }),
      echo,
    });
    const peers = pool();
    expect(peers.has(address)).toBe(false);
    const client = await peers.get(address);
    expect(peers.has(address)).toBe(true);
    expect(peers.limitOf(address)).toBe(10_000);
    expect(await client.call("echo", { text: "small" })).toBe("small");
    const err = await client.call("echo", { text: "x".repeat(20_000) }).catch((e: unknown) => e);
    expect(isDataError(err)).toBe(true);
    expect((err as Error).message).toContain(`the maxMessageBytes of worker ${address}`);
    // Refused here, so the connection stays up.
    expect(client.comm.isClosed).toBe(false);
    expect(await client.call("echo", { text: "again" })).toBe("again");
    // Gone with the peer (or its connection): kept, one per worker that ever was.
    peers.remove(address, `${address} left the cluster`);
    expect(peers.has(address)).toBe(false);
    expect(peers.limitOf(address)).toBeUndefined();
    const again = await peers.get(address);
    expect(peers.limitOf(address)).toBe(10_000);
    again.comm.abort();
    await again.comm.closed.catch(() => {});
    expect(peers.limitOf(address)).toBeUndefined();
  });

  it("sends anything to a peer that does not answer identity", async () => {
    const address = await peer({ echo });
    const peers = pool();
    const client = await peers.get(address);
    expect(peers.limitOf(address)).toBeUndefined();
    expect(await client.call("echo", { text: "x".repeat(20_000) })).toHaveLength(20_000);
  });

  it("waits for a late identity (as for a get_data), until the caller stops waiting", async () => {
    let answer: (v: unknown) => void = () => {};
    const address = await peer({
      identity: () => new Promise((resolve) => (answer = resolve)),
      echo,
    });
    const peers = pool(50);
    const stop = new AbortController();
    const first = peers.get(address, stop.signal);
    await new Promise((r) => setTimeout(r, 200));
    stop.abort(new Error("stopped"));
    await expect(first).rejects.toThrow("stopped");
    // The connection and its identity stay pending for the next caller.
    const second = peers.get(address);
    answer({ maxMessageBytes: 10_000 });
    const client = await second;
    expect(peers.limitOf(address)).toBe(10_000);
    expect(await client.call("echo", { text: "late" })).toBe("late");
  });

  it("a connection lost before the identity came is a network failure, and is not kept", async () => {
    const address = await peer({
      identity: (_args, ctx) => {
        ctx.comm.abort();
        return new Promise(() => {});
      },
    });
    const peers = pool();
    const err = await peers.get(address).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommClosedError);
    expect(isNetworkError(err)).toBe(true);
    expect((err as Error).message).toContain(`${address} did not answer identity`);
    expect(peers.size).toBe(0);
  });

  it("remove() cuts a connection still waiting for the identity of a silent peer (frozen): a network failure", async () => {
    const address = await peer({ identity: () => new Promise(() => {}), echo });
    const peers = pool();
    const pending = peers.get(address).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    peers.remove(address, `${address} left the cluster`);
    expectCutAsLeft(await pending, address, peers);
  });

  it("remove() while the connection is still being made cuts it (a silent peer never answers identity)", async () => {
    const address = await peer({ identity: () => new Promise(() => {}), echo });
    const peers = pool();
    const pending = peers.get(address).catch((e: unknown) => e);
    peers.remove(address, `${address} left the cluster`);
    expectCutAsLeft(await pending, address, peers);
    // The connect try is aborted: the peer sees no connection, or one closed, none left open.
    await sleep(200);
    const seen = comms.length;
    expect(seen).toBeLessThanOrEqual(1);
    await Promise.all(comms.map((c) => c.closed));
    // The next get connects afresh.
    const again = peers.get(address).catch((e: unknown) => e);
    await expect.poll(() => comms.length).toBe(seen + 1);
    expect(peers.size).toBe(1);
    peers.remove(address);
    expect(isNetworkError(await again)).toBe(true);
  });

  it("callers waiting on a connection that fails share one new connection, which closeAll() closes", async () => {
    let first = true;
    const address = await peer({
      identity: (_args, ctx) => {
        // The first connection is lost before it answers (the peer restarting, say).
        if (first) {
          first = false;
          ctx.comm.abort();
          return new Promise(() => {});
        }
        return { maxMessageBytes: 10_000 };
      },
    });
    const peers = pool();
    const failed = peers.get(address).catch((e: unknown) => e);
    // Two callers find the connection being made and wait on it.
    const [a, b] = await Promise.all([peers.get(address), peers.get(address)]);
    expect(isNetworkError(await failed)).toBe(true);
    expect(a).toBe(b);
    expect(peers.size).toBe(1);
    expect(comms).toHaveLength(2);
    await peers.closeAll();
    expect(a.comm.isClosed).toBe(true);
    // The peer sees every connection closed, none left open.
    await Promise.all(comms.map((c) => c.closed));
  });

  it("closeAll() cuts a connection still waiting for an identity", async () => {
    const address = await peer({ identity: () => new Promise(() => {}) });
    const peers = new PeerPool({ connectTimeoutMs: 5000 });
    const pending = peers.get(address).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    await peers.closeAll();
    expect(isNetworkError(await pending)).toBe(true);
  });

  it("closeAll() and remove() end a connection still being made (a TLS handshake never completed), where they waited out its timeout", async () => {
    const mute = await muteServer();
    try {
      const peers = new PeerPool({ connectTimeoutMs: 60_000, tls: testTls() });
      const address = `tls://${mute.hostPort}`;
      const removed = peers.get(address).catch((e: unknown) => e);
      await mute.acceptedAtLeast(1);
      peers.remove(address, `${address} left the cluster`);
      const cut = await Promise.race([removed, sleep(2_000, "still connecting")]);
      expectCutAsLeft(cut, address, peers);
      const pending = peers.get(address).catch((e: unknown) => e);
      await mute.acceptedAtLeast(2);
      // Before, the close of a worker fetching from such a peer waited 30 s on it.
      const closed = peers.closeAll().then(() => "closed");
      expect(await Promise.race([closed, sleep(2_000, "still closing")])).toBe("closed");
      expect(isNetworkError(await pending)).toBe(true);
      // Its socket closed too: left, it held the process open until the timeout.
      await mute.endedAtLeast(2);
    } finally {
      await mute.close();
    }
  });

  it("a peer saying a limit that is not a positive integer is refused, and is not kept", async () => {
    const address = await peer({ identity: () => ({ maxMessageBytes: -1 }) });
    const peers = pool();
    const err = await peers.get(address).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe(
      "identity: maxMessageBytes must be a positive integer, got -1",
    );
    expect(peers.size).toBe(0);
  });

  it("connects anew rather than hand out a connection closed since", async () => {
    const address = await peer({ identity: () => ({ type: "Worker" }), echo });
    const peers = pool();
    const first = await peers.get(address);
    first.comm.abort();
    const second = await peers.get(address);
    expect(second).not.toBe(first);
    expect(second.comm.isClosed).toBe(false);
    expect(await second.call("echo", { text: "hi" })).toBe("hi");
  });

  it("refuses to connect once closed", async () => {
    const address = await peer({ identity: () => ({ type: "Worker" }), echo });
    const peers = pool();
    await peers.get(address);
    await peers.closeAll();
    await expect(peers.get(address)).rejects.toThrow("peer pool is closed");
    expect(peers.size).toBe(0);
  });

  it("keeps the connection made after remove() when the one it cut fails", async () => {
    const address = await peer({ identity: () => ({ type: "Worker" }), echo });
    const peers = pool();
    const cutOne = peers.get(address).catch((e: unknown) => e);
    peers.remove(address, `${address} left the cluster`);
    const second = peers.get(address);
    expect((await cutOne) as Error).toBeInstanceOf(CommClosedError);
    const client = await second;
    expect(peers.size).toBe(1);
    expect(await peers.get(address)).toBe(client);
  });

  it("keeps the connection made after remove() when the one it closed ends", async () => {
    const address = await peer({ identity: () => ({ type: "Worker" }), echo });
    const peers = pool();
    const first = await peers.get(address);
    peers.remove(address);
    const second = await peers.get(address);
    await first.comm.closed.catch(() => {});
    expect(peers.size).toBe(1);
    expect(await peers.get(address)).toBe(second);
  });

  it("a get aborted while another connects leaves that connection in the pool", async () => {
    const address = await peer({ identity: () => ({ type: "Worker" }), echo });
    const peers = pool();
    const first = peers.get(address);
    const stop = new Error("stop");
    await expect(peers.get(address, AbortSignal.abort(stop))).rejects.toBe(stop);
    const client = await first;
    expect(await peers.get(address)).toBe(client);
    expect(peers.size).toBe(1);
  });
});
