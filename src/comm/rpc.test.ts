import { afterEach, describe, expect, it } from "vitest";
import { CommClosedError, isNetworkError, SerializationError } from "./errors.ts";
import { RemoteError, type RpcHandler, rpc, serveRpc } from "./rpc.ts";
import { type CommPair, commPair } from "./testPair.ts";

const pairs: CommPair[] = [];
afterEach(async () => {
  for (const p of pairs.splice(0)) {
    p.client.abort();
    p.server.abort();
    await p.listener.close();
  }
});

describe.each(["inproc://", "tcp://127.0.0.1:0"])("rpc over %s", (address) => {
  async function served(handlers: Record<string, RpcHandler>) {
    const p = await commPair(address);
    pairs.push(p);
    void serveRpc(p.server, handlers);
    return { client: rpc(p.client), pair: p };
  }

  it("a server aborting its own comm is logged as expected, a peer breaking it as a warning", async () => {
    const logged: string[] = [];
    const logger = {
      warn: (_o: object, msg?: string) => logged.push(`warn ${msg}`),
      error: (_o: object, msg?: string) => logged.push(`error ${msg}`),
      debug: (_o: object, msg?: string) => logged.push(`debug ${msg}`),
    };
    const mine = await commPair(address);
    const theirs = await commPair(address);
    pairs.push(mine, theirs);
    const servedMine = serveRpc(mine.server, {}, logger);
    const servedTheirs = serveRpc(theirs.server, {}, logger);
    mine.server.abort();
    await servedMine;
    expect(logged).toEqual(["debug rpc: comm aborted"]);
    theirs.server.abort(new CommClosedError("connection reset"));
    await servedTheirs;
    expect(logged).toEqual(["debug rpc: comm aborted", "warn rpc: comm broke"]);
    // What the peer sent could not be read: its fault, one line without a stack.
    const garbled = await commPair(address);
    pairs.push(garbled);
    const servedGarbled = serveRpc(garbled.server, {}, logger);
    garbled.server.abort(
      new CommClosedError("malformed frame", { cause: new SerializationError("bad msgpack") }),
    );
    await servedGarbled;
    expect(logged.at(-1)).toBe("warn rpc: unreadable peer");
  });

  it("calls and answers", async () => {
    const { client } = await served({ add: (a) => (a.x as number) + (a.y as number) });
    expect(await client.call("add", { x: 1, y: 2 })).toBe(3);
  });

  it("matches answers to requests by id, whatever the order", async () => {
    const { client } = await served({
      sleep: async (a) => {
        await new Promise((r) => setTimeout(r, a.ms as number));
        return a.ms;
      },
    });
    const results = await Promise.all([30, 1, 15].map((ms) => client.call("sleep", { ms })));
    expect(results).toEqual([30, 1, 15]);
    expect(client.pendingCount).toBe(0);
  });

  it("a handler's error comes back as a RemoteError", async () => {
    const { client } = await served({
      boom: () => {
        throw new TypeError("bad thing");
      },
    });
    const err = await client.call("boom").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).remoteName).toBe("TypeError");
    expect((err as Error).message).toMatch(/boom on .* failed: TypeError: bad thing/);
    expect(isNetworkError(err)).toBe(false);
  });

  it("an error-like object thrown is said by its fields, not as [object Object]", async () => {
    const { client } = await served({
      boom: () => {
        throw { name: "TransformError", message: "Expected ';' but found 'is'" };
      },
      junk: () => {
        throw 42;
      },
    });
    const err = await client.call("boom").catch((e: unknown) => e);
    expect((err as RemoteError).remoteName).toBe("TransformError");
    expect((err as Error).message).toMatch(/failed: TransformError: Expected ';' but found 'is'$/);
    expect(((await client.call("junk").catch((e: unknown) => e)) as Error).message).toMatch(
      /failed: Error: 42$/,
    );
  });

  it("unknown ops are answered with an error", async () => {
    const { client } = await served({});
    await expect(client.call("nope")).rejects.toThrow(/unknown op "nope"/);
  });

  it("pending calls reject with a network error when the comm closes", async () => {
    const { client, pair } = await served({ never: () => new Promise(() => {}) });
    const pending = client.call("never").catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 10));
    await pair.server.close();
    const err = await pending;
    expect(err).toBeInstanceOf(CommClosedError);
    expect(isNetworkError(err)).toBe(true);
    await expect(client.call("never")).rejects.toBeInstanceOf(CommClosedError);
  });

  it("a call can be aborted or time out", async () => {
    const { client } = await served({ never: () => new Promise(() => {}) });
    const ac = new AbortController();
    const p = client.call("never", {}, { signal: ac.signal });
    ac.abort(new Error("stop"));
    await expect(p).rejects.toThrow("stop");
    await expect(client.call("never", {}, { timeoutMs: 10 })).rejects.toThrow(/timed out/);
    expect(client.pendingCount).toBe(0);
  });

  it("afterReply runs once the answer was sent", async () => {
    const events: string[] = [];
    const { client } = await served({
      get: (_a, ctx) => {
        ctx.afterReply((ok) => events.push(`sent:${ok}`));
        events.push("handled");
        return "v";
      },
    });
    expect(await client.call("get")).toBe("v");
    await new Promise((r) => setTimeout(r, 5));
    expect(events).toEqual(["handled", "sent:true"]);
  });

  it("limitReplyTo: an answer over the requester's limit is refused with an error answer naming it (TCP); the comm stays open", async () => {
    const { client } = await served({
      get: (args, ctx) => {
        ctx.limitReplyTo?.(1000, "the requester's limit");
        return new Uint8Array(args.n as number);
      },
      bad: (_args, ctx) => {
        ctx.limitReplyTo?.(0, "x");
        return 1;
      },
    });
    const err = await client.call("get", { n: 5000 }).catch((e: unknown) => e);
    if (address.startsWith("inproc")) {
      // In-process messages have no size limit.
      expect(err).toEqual(new Uint8Array(5000));
    } else {
      expect(err).toBeInstanceOf(RemoteError);
      expect((err as RemoteError).remoteName).toBe("MessageTooLargeError");
      expect((err as Error).message).toMatch(
        /^get on tcp:\/\/.* failed: MessageTooLargeError: cannot send a message of 4\.\d\d kiB \(\d+ bytes\): larger than the requester's limit \(0\.98 kiB\)$/,
      );
      expect(isNetworkError(err)).toBe(false);
    }
    expect(await client.call("get", { n: 500 })).toEqual(new Uint8Array(500));
    await expect(client.call("bad")).rejects.toThrow(
      /RangeError: limitSendsTo: maxMessageBytes must be a positive integer, got 0/,
    );
    expect(client.comm.isClosed).toBe(false);
  });

  it("a request saying the requester's maxMessageBytes gets no larger answer, whatever its op; a bad one is refused before the handler runs", async () => {
    let ran = 0;
    const { client } = await served({
      anything: (args) => {
        ran++;
        return new Uint8Array(args.n as number);
      },
    });
    const err = await client
      .call("anything", { n: 5000, who: "client-1", maxMessageBytes: 1000 })
      .catch((e: unknown) => e);
    if (address.startsWith("inproc")) {
      // In-process messages have no size limit.
      expect(err).toEqual(new Uint8Array(5000));
    } else {
      expect((err as Error).message).toMatch(
        /^anything on .* failed: MessageTooLargeError: cannot send a message of 4\.\d\d kiB \(\d+ bytes\): larger than the maxMessageBytes of client-1 \(0\.98 kiB\)$/,
      );
    }
    expect(await client.call("anything", { n: 500, maxMessageBytes: 1000 })).toEqual(
      new Uint8Array(500),
    );
    ran = 0;
    for (const bad of [0, -1, 1.5, "1000", null]) {
      await expect(client.call("anything", { n: 1, maxMessageBytes: bad })).rejects.toThrow(
        /TypeError: anything: maxMessageBytes must be a positive integer, got /,
      );
    }
    expect(ran).toBe(0);
    expect(client.comm.isClosed).toBe(false);
  });

  it("malformed requests do not break the server", async () => {
    const { client, pair } = await served({ ping: () => "pong" });
    await pair.client.send("garbage");
    await pair.client.send({ op: 3, id: 99 });
    expect(await client.call("ping")).toBe("pong");
  });
});
