import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CommClosedError, isNetworkError, SerializationError } from "./errors.ts";
import { RemoteError, type RpcHandler, remoteMessage, rpc, serveRpc } from "./rpc.ts";
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
    const fields: object[] = [];
    const logger = {
      warn: (o: object, msg?: string) => fields.push(o) && logged.push(`warn ${msg}`),
      error: (_o: object, msg?: string) => logged.push(`error ${msg}`),
      debug: (o: object, msg?: string) => fields.push(o) && logged.push(`debug ${msg}`),
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
    // A peer gone: one line with the code and reason, the error's stack at debug only.
    expect(logged).toEqual([
      "debug rpc: comm aborted",
      "warn rpc: comm broke",
      "debug rpc: comm broke (the error with its stack)",
    ]);
    expect(fields.at(-2)).toEqual({
      peer: theirs.server.peerAddress,
      code: null,
      reason: "connection reset",
    });
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

  it("timeoutMs Infinity waits for the answer; one no timer can wait is refused", async () => {
    // A Node.js timer longer than 2^31 - 1 ms (Infinity too) fires after 1 ms.
    const { client } = await served({
      late: () => new Promise((r) => setTimeout(() => r("late"), 30)),
    });
    expect(await client.call("late", {}, { timeoutMs: Number.POSITIVE_INFINITY })).toBe("late");
    for (const timeoutMs of [0, -1, Number.NaN, 2 ** 31]) {
      await expect(client.call("late", {}, { timeoutMs }), String(timeoutMs)).rejects.toThrow(
        /^rpc late: timeoutMs must be a positive number of ms, at most 2147483647 \(about 24.8 days\), or Infinity \(no limit\), got /,
      );
    }
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

  it("an afterReply callback that throws or rejects is logged; the others run, and the server goes on", async () => {
    const logged: { msg: string; err: unknown }[] = [];
    const logger = {
      warn: () => {},
      error: (o: object, msg?: string) =>
        logged.push({ msg: msg ?? "", err: (o as { err?: unknown }).err }),
    };
    const p = await commPair(address);
    pairs.push(p);
    const told: boolean[] = [];
    void serveRpc(
      p.server,
      {
        get: (_a, ctx) => {
          ctx.afterReply(() => {
            throw new RangeError("sync callback failed");
          });
          ctx.afterReply(() => Promise.reject(new RangeError("async callback failed")));
          ctx.afterReply((ok) => told.push(ok));
          return "v";
        },
      },
      logger,
    );
    const client = rpc(p.client);
    // Before, the throw rejected the answering (an unhandled rejection: the process ended).
    expect(await client.call("get")).toBe("v");
    expect(await client.call("get")).toBe("v");
    await new Promise((r) => setTimeout(r, 5));
    expect(told).toEqual([true, true]);
    expect(logged.map((l) => `${l.msg}: ${(l.err as Error).message}`).sort()).toEqual([
      "rpc: an afterReply callback failed: async callback failed",
      "rpc: an afterReply callback failed: async callback failed",
      "rpc: an afterReply callback failed: sync callback failed",
      "rpc: an afterReply callback failed: sync callback failed",
    ]);
  });

  it("an afterReply callback that throws, served without a logger, is a process warning", async () => {
    const warned: string[] = [];
    const spy = vi.spyOn(process, "emitWarning").mockImplementation((w) => {
      warned.push(String(w));
    });
    try {
      const { client } = await served({
        get: (_a, ctx) => {
          ctx.afterReply(() => {
            throw new RangeError("sync callback failed");
          });
          return "v";
        },
      });
      expect(await client.call("get")).toBe("v");
      await new Promise((r) => setTimeout(r, 5));
      expect(warned).toEqual([
        "rpc: an afterReply callback failed: RangeError: sync callback failed",
      ]);
    } finally {
      spy.mockRestore();
    }
  });

  it("a handler throwing an error whose fields cannot be read gets an error answer saying so", async () => {
    const hostile = new Error("hidden");
    Object.defineProperty(hostile, "stack", {
      get() {
        throw new Error("stack getter");
      },
    });
    const { client } = await served({
      stack: () => {
        throw hostile;
      },
      proxy: () => {
        throw new Proxy(
          {},
          {
            get() {
              throw new Error("proxy trap");
            },
          },
        );
      },
    });
    // Before, reading the fields threw in the answering, which nothing awaits: an
    // unhandled rejection, and the caller waited for good.
    await expect(client.call("stack", {}, { timeoutMs: 2000 })).rejects.toThrow(
      /stack on .* failed: Error: hidden/,
    );
    await expect(client.call("proxy", {}, { timeoutMs: 2000 })).rejects.toThrow(
      /proxy on .* failed: Error: an error whose fields cannot be read \(Error: proxy trap\)/,
    );
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

describe("rpc, what a caller and a server get in the corners", () => {
  async function served(handlers: Record<string, RpcHandler>, address = "inproc://") {
    const p = await commPair(address);
    pairs.push(p);
    void serveRpc(p.server, handlers);
    return { client: rpc(p.client) };
  }

  /** A pair with a server and no RpcClient: the test speaks the wire form itself. */
  async function rawServed(handlers: Record<string, RpcHandler>) {
    const p = await commPair("inproc://");
    pairs.push(p);
    void serveRpc(p.server, handlers);
    return p.client;
  }

  it("remoteMessage is the remote error's own message, without the rpc's words before it", () => {
    const err = new RemoteError("get on tcp://h:1 failed: TypeError: bad thing", "TypeError", "");
    expect(remoteMessage(err)).toBe("bad thing");
    expect(remoteMessage(new RemoteError("said otherwise", "TypeError", ""))).toBe(
      "said otherwise",
    );
  });

  it("a RemoteError carries the remote stack", async () => {
    const { client } = await served({
      boom: function throwsHere() {
        throw new TypeError("bad thing");
      },
    });
    const err = (await client.call("boom").catch((e: unknown) => e)) as RemoteError;
    expect(err.remoteStack).toMatch(/^TypeError: bad thing\n.*throwsHere/s);
  });

  it("a call with a signal already aborted rejects with its reason, sending nothing", async () => {
    let ran = 0;
    const { client } = await served({ ping: () => ++ran });
    const ac = new AbortController();
    ac.abort(new Error("stop"));
    await expect(client.call("ping", {}, { signal: ac.signal })).rejects.toThrow("stop");
    expect(await client.call("ping")).toBe(1);
  });

  it("a settled call leaves no timer and no listener on its signal behind", async () => {
    const { client } = await served({ ping: () => "pong" });
    const ac = new AbortController();
    // A long timeout left running would hold the process open that long.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      expect(await client.call("ping", {}, { timeoutMs: 60_000, signal: ac.signal })).toBe("pong");
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    // One signal for many calls (a worker's closing): its listeners must not pile up.
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
  });

  it("afterReply is told false when the answer could not be sent", async () => {
    let told!: (ok: boolean) => void;
    const ok = new Promise<boolean>((r) => {
      told = r;
    });
    // Over TCP, which encodes: in-process messages are not.
    const { client } = await served(
      {
        get: (_a, ctx) => {
          ctx.afterReply(told);
          return () => 1; // cannot be encoded
        },
      },
      "tcp://127.0.0.1:0",
    );
    await expect(client.call("get")).rejects.toThrow(/SerializationError/);
    expect(await ok).toBe(false);
  });

  it("an op named after an Object.prototype method is unknown", async () => {
    const { client } = await served({});
    for (const op of ["toString", "constructor", "hasOwnProperty"]) {
      await expect(client.call(op)).rejects.toThrow(`unknown op "${op}"`);
    }
  });

  it("handlers that are not an object are refused at once, not at the first request", async () => {
    const p = await commPair("inproc://");
    pairs.push(p);
    // Read per request, null threw in the answering, which nothing awaits: the process ended.
    await expect(serveRpc(p.server, null as never)).rejects.toThrow(
      new TypeError("serveRpc: handlers must be an object {op: handler}, got null"),
    );
  });

  it("a request without args is served with none", async () => {
    const comm = await rawServed({ ping: (args) => ({ pong: args }) });
    await comm.send({ op: "ping", id: 7 });
    expect(await comm.recv()).toEqual({ id: 7, result: { pong: {} } });
  });

  it("a request whose id is not an integer has no usable id: the connection is closed", async () => {
    const comm = await rawServed({ ping: () => "pong" });
    await comm.send({ op: "ping", id: 1.5 });
    await expect(comm.recv()).rejects.toBeInstanceOf(CommClosedError);
  });

  it("an answer without an id is logged and ignored", async () => {
    const logged: string[] = [];
    const logger = { warn: (_o: object, msg?: string) => logged.push(msg ?? ""), error: () => {} };
    const p = await commPair("inproc://");
    pairs.push(p);
    const client = rpc(p.client, logger);
    const answered = client.call("get");
    const request = (await p.server.recv()) as { id: number };
    await p.server.send({ result: "stray" });
    await p.server.send({ id: request.id, result: "ok" });
    expect(await answered).toBe("ok");
    expect(logged).toEqual(["rpc: ignoring a malformed answer"]);
  });
});

describe("rpc with a logger that throws", () => {
  /** A logger every method of which throws, as a full disk makes a pino logger's. */
  const broken = () => {
    const fail = () => {
      throw new Error("disk full");
    };
    return { warn: fail, error: fail, debug: fail };
  };

  it("a client reads on past a line it could not log", async () => {
    const p = await commPair("inproc://");
    pairs.push(p);
    const client = rpc(p.client, broken());
    const answered = client.call("get");
    const request = (await p.server.recv()) as { id: number };
    await p.server.send({ result: "stray" });
    await p.server.send({ id: request.id, result: "ok" });
    expect(await answered).toBe("ok");
  });

  it("a server answers a request it could not log, and ends when its comm does", async () => {
    const p = await commPair("inproc://");
    pairs.push(p);
    const served = serveRpc(p.server, {}, broken());
    await expect(rpc(p.client).call("nope", {}, { timeoutMs: 5000 })).rejects.toThrow(
      /unknown op "nope"/,
    );
    p.server.abort();
    await expect(served).resolves.toBeUndefined();
  });
});

describe("an rpc server's peer that sends requests in bulk and does not read the answers", () => {
  it("is read no further than 64 answers beyond what the network took, and gets every answer once it reads", async () => {
    const { connect: netConnect } = await import("node:net");
    const { listen } = await import("./connect.ts");
    const { FrameReader, framesOf } = await import("./framing.ts");
    const { messageSegments, splitMessage } = await import("./messageLayout.ts");
    const { decodeMessage, encodeMessage } = await import("./wireCodec.ts");
    const { parseHostPort } = await import("../util/address.ts");
    const { MAX_RPC_ANSWERS_IN_FLIGHT } = await import("./answersInFlight.ts");
    let handled = 0;
    const answer = "x".repeat(256 * 1024);
    const listener = await listen("tcp://127.0.0.1:0", (comm) => {
      void serveRpc(comm, {
        big: () => {
          handled++;
          return answer;
        },
      });
    });
    const { host, port } = parseHostPort(listener.address);
    const socket = netConnect({ host, port });
    await new Promise((r) => socket.once("connect", r));
    const n = 400; // 100 MiB of answers
    const frames = Array.from({ length: n }, (_, i) =>
      Buffer.concat(framesOf(messageSegments(encodeMessage({ op: "big", id: i + 1 })), 1 << 26)),
    );
    // No 'data' listener: the socket reads nothing past Node's small buffer.
    socket.write(Buffer.concat(frames));
    let last = -1;
    for (let quiet = 0; quiet < 5 && handled < n; ) {
      await new Promise((r) => setTimeout(r, 100));
      quiet = handled === last ? quiet + 1 : 0;
      last = handled;
    }
    // What the kernel's buffers took (some megabytes) and the bound: not all 400.
    expect(handled).toBeLessThan(n / 2);
    expect(handled).toBeGreaterThanOrEqual(MAX_RPC_ANSWERS_IN_FLIGHT);
    const ids = new Set<number>();
    const reader = new FrameReader(1 << 26);
    socket.on("data", (chunk: Buffer) => {
      for (const bytes of reader.push(chunk)) {
        const { payload, buffers } = splitMessage(bytes);
        const m = decodeMessage(payload, buffers) as { id: number; result: string };
        if (m.result === answer) ids.add(m.id);
      }
    });
    for (let i = 0; i < 600 && ids.size < n; i++) await new Promise((r) => setTimeout(r, 50));
    expect(ids.size).toBe(n);
    expect(handled).toBe(n);
    socket.destroy();
    await listener.close();
  }, 60_000);
});
