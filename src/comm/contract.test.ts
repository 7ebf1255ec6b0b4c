import { afterEach, describe, expect, it } from "vitest";
import type { Comm, ConnectOptions, Listener } from "./comm.ts";
import { connect, listen } from "./connect.ts";
import { CommClosedError, ConnectError, isNetworkError } from "./errors.ts";
import { commPair } from "./testPair.ts";
import { testTls } from "./testTls.ts";

/** The behaviour every transport must share. */
const TRANSPORTS: { name: string; address: string; options: ConnectOptions }[] = [
  { name: "inproc", address: "inproc://", options: {} },
  { name: "tcp", address: "tcp://127.0.0.1:0", options: {} },
  { name: "tls", address: "tls://127.0.0.1:0", options: { tls: testTls() } },
];

describe.each(TRANSPORTS)("comm contract: $name", ({ address, options }) => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0)) await fn();
  });

  async function pair() {
    const p = await commPair(address, options);
    cleanup.push(async () => {
      p.client.abort();
      p.server.abort();
      await p.listener.close();
    });
    return p;
  }

  it("gives the listener a concrete address of its scheme", async () => {
    const { listener, client, server } = await pair();
    const scheme = address.split("://")[0];
    expect(listener.address.startsWith(`${scheme}://`)).toBe(true);
    expect(listener.address).not.toMatch(/:0$/);
    expect(client.peerAddress).toBe(listener.address);
    expect(server.localAddress.startsWith(`${scheme}://`)).toBe(true);
    expect(client.isClosed).toBe(false);
  });

  it("delivers messages in order, both ways", async () => {
    const { client, server } = await pair();
    const n = 2000;
    for (let i = 0; i < n; i++) void client.send({ i });
    for (let i = 0; i < n; i++) void server.send([i, "back"]);
    for (let i = 0; i < n; i++) expect(await server.recv()).toEqual({ i });
    for (let i = 0; i < n; i++) expect(await client.recv()).toEqual([i, "back"]);
  });

  it("delivers asynchronously: nothing arrives during the sending turn", async () => {
    const { client, server } = await pair();
    let got: unknown = "nothing";
    void server.recv().then((m) => {
      got = m;
    });
    await client.send("x");
    // the promise chain of recv has not run yet in this turn for inproc, and TCP needs I/O
    expect(["nothing", "x"]).toContain(got);
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toBe("x");
  });

  it("keeps JS values: Maps, Sets, nesting, binary, dates, bigints, undefined", async () => {
    const { client, server } = await pair();
    const msg = {
      op: "x",
      map: new Map<unknown, unknown>([
        ["a", 1],
        [2, new Set(["s", 3])],
      ]),
      nested: { list: [1, 2.5, -3, null, true, "é"], deep: { deeper: [[{}]] } },
      bytes: new Uint8Array([1, 2, 3]),
      floats: new Float64Array([0.5, 1.5]),
      when: new Date(1_700_000_000_000),
      big: 2n ** 70n,
      missing: undefined,
    };
    await client.send(msg);
    expect(await server.recv()).toEqual(msg);
  });

  it("carries large messages", async () => {
    const { client, server } = await pair();
    const bytes = new Uint8Array(16 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i % 251;
    const rows = Array.from({ length: 50_000 }, (_, i) => ({ i, name: `row-${i}` }));
    await client.send({ bytes, rows });
    const got = (await server.recv()) as { bytes: Uint8Array; rows: unknown[] };
    expect(got.bytes.length).toBe(bytes.length);
    expect(Buffer.from(got.bytes).equals(Buffer.from(bytes))).toBe(true);
    expect(got.rows).toEqual(rows);
  });

  it("close: messages sent before are delivered, then the peer's iterator ends", async () => {
    const { client, server } = await pair();
    void client.send(1);
    void client.send(2);
    await client.close();
    expect(client.isClosed).toBe(true);
    const got: unknown[] = [];
    for await (const m of server) got.push(m);
    expect(got).toEqual([1, 2]);
    expect(await server.closed).toEqual({ error: null });
    expect(await client.closed).toEqual({ error: null });
    expect(server.isClosed).toBe(true);
  });

  it("after close, send and recv reject with CommClosedError", async () => {
    const { client, server } = await pair();
    await client.close();
    await expect(client.send("late")).rejects.toBeInstanceOf(CommClosedError);
    await expect(client.recv()).rejects.toBeInstanceOf(CommClosedError);
    await server.closed;
    await expect(server.send("late")).rejects.toBeInstanceOf(CommClosedError);
    await expect(server.recv()).rejects.toBeInstanceOf(CommClosedError);
    await client.close(); // idempotent
  });

  it("a pending recv rejects when the peer closes", async () => {
    const { client, server } = await pair();
    const pending = server.recv().catch((e: unknown) => e);
    await client.close();
    const err = await pending;
    expect(err).toBeInstanceOf(CommClosedError);
    expect(isNetworkError(err)).toBe(true);
  });

  it("abort closes both ends", async () => {
    const { client, server } = await pair();
    client.abort();
    expect(client.isClosed).toBe(true);
    expect((await client.closed).error).toBeInstanceOf(Error);
    await server.closed;
    expect(server.isClosed).toBe(true);
  });

  it("connect to an address nobody listens at fails with a ConnectError", async () => {
    const listener = await listen(address, () => {}, options);
    const dead = listener.address;
    await listener.close();
    const err = await connect(dead, { ...options, timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).address).toBe(dead);
    expect((err as Error).message).toContain(dead);
    expect(isNetworkError(err)).toBe(true);
  });

  it("a closed listener accepts no more, but its comms go on", async () => {
    const { listener, client, server } = await pair();
    await listener.close();
    await expect(connect(listener.address, { ...options, timeoutMs: 5000 })).rejects.toBeInstanceOf(
      ConnectError,
    );
    await client.send("still");
    expect(await server.recv()).toBe("still");
  });

  it("a handler that throws, or whose promise rejects, ends its connection, not the process", async () => {
    let n = 0;
    const listener: Listener = await listen(
      address,
      async (c) => {
        n += 1;
        if (n === 1) throw new Error("the handler broke at once");
        const first = await c.recv();
        if (first === "fail") throw new Error("the handler broke later");
        await c.send({ echo: first });
      },
      options,
    );
    cleanup.push(() => listener.close());
    // Each ends (the dialling end sees it closed), rather than stay open for nobody.
    const atOnce = await connect(listener.address, options);
    await atOnce.closed;
    const later = await connect(listener.address, options);
    await later.send("fail");
    await later.closed;
    // The listener goes on.
    const fine = await connect(listener.address, options);
    await fine.send("hi");
    expect(await fine.recv()).toEqual({ echo: "hi" });
    await fine.close();
  });

  it("serves many connections at once", async () => {
    const accepted: Comm[] = [];
    const listener: Listener = await listen(
      address,
      (c) => {
        accepted.push(c);
        void (async () => {
          for await (const m of c) await c.send(m);
        })();
      },
      options,
    );
    cleanup.push(() => listener.close());
    const clients = await Promise.all(
      Array.from({ length: 20 }, () => connect(listener.address, options)),
    );
    const answers = await Promise.all(
      clients.map(async (c, i) => {
        await c.send({ i });
        return c.recv();
      }),
    );
    expect(answers).toEqual(clients.map((_, i) => ({ i })));
    for (const c of clients) await c.close();
    for (const c of accepted) await c.closed;
  });
});
