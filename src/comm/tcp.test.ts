import {
  type AddressInfo,
  createServer,
  Socket as NetSocket,
  connect as netConnect,
  type Socket,
} from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseHostPort } from "../util/address.ts";
import { runGcScript } from "../util/testGcScript.ts";
import { ClonedValue } from "./clonedValue.ts";
import type { Comm, ListenOptions } from "./comm.ts";
import { connect, listen } from "./connect.ts";
import {
  CommClosedError,
  ConnectError,
  FrameTooLargeError,
  isNetworkError,
  MessageTooLargeError,
  SerializationError,
} from "./errors.ts";
import { forEachMessage } from "./forEachMessage.ts";
import { ForwardedBytes, ForwardedClonedValue } from "./forwardedBytes.ts";
import { frameHeader, framesOf } from "./framing.ts";
import { messageSegments } from "./messageLayout.ts";
import { commPair, iterationError } from "./testPair.ts";
import { testTls } from "./testTls.ts";
import { encodeMessage } from "./wireCodec.ts";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

/** A comm pair over TCP whose two ends and listener the test's cleanup ends. */
async function cleanedPair(options?: Parameters<typeof commPair>[1]) {
  const p = await commPair("tcp://127.0.0.1:0", options);
  cleanup.push(async () => {
    p.client.abort();
    p.server.abort();
    await p.listener.close();
  });
  return p;
}

/** A listener whose accepted comm is given to the test, and a raw socket to it. */
async function rawPeer(
  maxFrameBytes?: number,
  maxMessageBytes?: number,
  options: ListenOptions = {},
): Promise<{ socket: Socket; server: Comm }> {
  let accepted!: (c: Comm) => void;
  const serverP = new Promise<Comm>((r) => {
    accepted = r;
  });
  const listener = await listen("tcp://127.0.0.1:0", (c) => accepted(c), {
    maxFrameBytes,
    maxMessageBytes,
    ...options,
  });
  const { host, port } = parseHostPort(listener.address);
  const socket = netConnect({ host, port });
  await new Promise((r) => socket.once("connect", r));
  const server = await serverP;
  cleanup.push(async () => {
    socket.destroy();
    server.abort();
    await listener.close();
  });
  return { socket, server };
}

/** The bytes of a typed array, `Buffer` or `ArrayBuffer`. */
function bytesOf(v: unknown): Buffer {
  if (v instanceof ArrayBuffer) return Buffer.from(v);
  const view = v as ArrayBufferView;
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

describe("tcp transport", () => {
  it("a malformed frame closes the comm with a SerializationError, not the process", async () => {
    const { socket, server } = await rawPeer();
    const garbage = Buffer.from([0x92, 0x01]); // an array of 2 with one element
    socket.write(Buffer.concat([frameHeader(garbage.length), garbage]));
    const err = await iterationError(server);
    expect(err).toBeInstanceOf(SerializationError);
    expect((err as Error).message).toMatch(/malformed frame/);
    const info = await server.closed;
    expect(info.error).toBeInstanceOf(SerializationError);
    const recvErr = await server.recv().catch((e: unknown) => e);
    expect(recvErr).toBeInstanceOf(CommClosedError);
    expect(isNetworkError(recvErr)).toBe(false);
  });

  it("a frame header above maxFrameBytes closes the comm with a FrameTooLargeError", async () => {
    const { socket, server } = await rawPeer(1024);
    socket.write(frameHeader(1_000_000));
    const err = await iterationError(server);
    expect(err).toBeInstanceOf(FrameTooLargeError);
    expect((err as Error).message).toContain("1000000");
  });

  it("bytes that cannot be read close the comm, the messages that arrived whole before them still read", async () => {
    const { encodeMessage } = await import("./wireCodec.ts");
    const { messageSegments } = await import("./messageLayout.ts");
    const { framesOf } = await import("./framing.ts");
    const wire = (m: unknown) => Buffer.concat(framesOf(messageSegments(encodeMessage(m)), 1024));
    const tails = [
      [frameHeader(1_000_000), FrameTooLargeError],
      [Buffer.concat([frameHeader(2), Buffer.from([0x92, 0x01])]), SerializationError],
      [
        Buffer.concat([frameHeader(1000, true), Buffer.alloc(1000), frameHeader(1000)]),
        MessageTooLargeError,
      ],
    ] as const;
    for (const [tail, errorClass] of tails) {
      for (const oneChunk of [true, false]) {
        const { socket, server } = await rawPeer(1024, 1500);
        const good = Buffer.concat([wire({ n: 1 }), wire({ n: 2 }), wire({ n: 3 })]);
        if (oneChunk) {
          // The bad bytes come in the chunk that completes the good messages.
          socket.write(Buffer.concat([good, tail]));
        } else {
          // The good messages are queued, unread, when the bad bytes come.
          socket.write(good);
          expect(await server.recv()).toEqual({ n: 1 });
          socket.write(tail);
        }
        const { error } = await server.closed;
        expect(error).toBeInstanceOf(errorClass);
        const got: unknown[] = [];
        const err = await (async () => {
          for (;;) got.push(await server.recv());
        })().catch((e: unknown) => e);
        expect(got).toEqual(oneChunk ? [{ n: 1 }, { n: 2 }, { n: 3 }] : [{ n: 2 }, { n: 3 }]);
        expect(err).toBeInstanceOf(CommClosedError);
        expect((err as Error).cause).toBe(error);
      }
    }
  });

  it("the docs' echo server outlives a peer that is not weft's: its handler's rejection ends that connection only", async () => {
    // docs/comm.md's example: the reader rejects when its connection breaks (here an
    // HTTP request, bytes that are not weft's), and with it the async handler.
    const listener = await listen("tcp://127.0.0.1:0", async (comm) => {
      await forEachMessage(comm, (msg) => comm.send({ echo: msg }).catch(() => {}));
    });
    cleanup.push(() => listener.close());
    const { host, port } = parseHostPort(listener.address);
    const http = netConnect({ host, port }, () => http.write("GET / HTTP/1.0\r\n\r\n"));
    http.on("error", () => {});
    await new Promise((r) => http.once("close", r));
    const comm = await connect(listener.address);
    await comm.send({ op: "hello" });
    expect(await comm.recv()).toEqual({ echo: { op: "hello" } });
    await comm.close();
  });

  it("a connection closed mid-message is a CommClosedError saying so", async () => {
    const { socket, server } = await rawPeer();
    socket.end(Buffer.concat([frameHeader(100), Buffer.alloc(10)]));
    const err = await iterationError(server);
    expect(err).toBeInstanceOf(CommClosedError);
    expect((err as Error).message).toMatch(/mid-message: received 10 of 100 bytes/);
  });

  it("a connection closed right after a header, before any byte of its frame, is closed mid-message", async () => {
    const { socket, server } = await rawPeer();
    socket.end(frameHeader(100));
    const err = await iterationError(server);
    expect(err).toBeInstanceOf(CommClosedError);
    expect((err as Error).message).toMatch(/mid-message: received 0 of 100 bytes/);
  });

  it("a send while closing is refused, and the close stays orderly", async () => {
    const p = await commPair("tcp://127.0.0.1:0");
    cleanup.push(async () => {
      p.server.abort();
      await p.listener.close();
    });
    const closing = p.client.close();
    await expect(p.client.send("late")).rejects.toThrow(/is closed$/);
    await closing;
    expect((await p.client.closed).error).toBeNull();
  });

  it("a connection closed between the frames of a message says how much of it came", async () => {
    const { socket, server } = await rawPeer();
    socket.end(Buffer.concat([frameHeader(100, true), Buffer.alloc(100)]));
    const err = await iterationError(server);
    expect((err as Error).message).toMatch(/mid-message: 100 bytes of it received/);
  });

  it("frames split at every byte still decode", async () => {
    const { socket, server } = await rawPeer();
    const { encodeMessage } = await import("./wireCodec.ts");
    const { messageSegments } = await import("./messageLayout.ts");
    const payload = Buffer.concat(messageSegments(encodeMessage({ hello: "world", n: [1, 2, 3] })));
    const bytes = Buffer.concat([
      frameHeader(payload.length),
      payload,
      frameHeader(payload.length),
      payload,
    ]);
    for (const b of bytes) {
      socket.write(Buffer.from([b]));
      await new Promise((r) => setImmediate(r));
    }
    expect(await server.recv()).toEqual({ hello: "world", n: [1, 2, 3] });
    expect(await server.recv()).toEqual({ hello: "world", n: [1, 2, 3] });
  });

  it("a message larger than maxFrameBytes goes in several frames and arrives whole", async () => {
    const p = await commPair("tcp://127.0.0.1:0", { maxFrameBytes: 1000 });
    cleanup.push(async () => {
      p.client.abort();
      await p.listener.close();
    });
    const big = Uint8Array.from({ length: 100_000 }, (_, i) => i % 253);
    await p.client.send({ big, after: "x" });
    await p.client.send("small");
    expect(await p.server.recv()).toEqual({ big, after: "x" });
    expect(await p.server.recv()).toBe("small");
  });

  it("sending more than maxMessageBytes rejects and leaves the comm open", async () => {
    const p = await commPair("tcp://127.0.0.1:0", { maxMessageBytes: 1000 });
    cleanup.push(async () => {
      p.client.abort();
      await p.listener.close();
    });
    const err = await p.client.send(new Uint8Array(2000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MessageTooLargeError);
    expect((err as MessageTooLargeError).bytes).toBeGreaterThan(2000);
    await p.client.send("small");
    expect(await p.server.recv()).toBe("small");
  });

  it("after limitSendsTo, sending more than the peer's limit rejects naming it; the comm stays open", async () => {
    const p = await commPair("tcp://127.0.0.1:0", { maxMessageBytes: 10_000 });
    cleanup.push(async () => {
      p.client.abort();
      await p.listener.close();
    });
    expect(() => p.client.limitSendsTo?.(0, "x")).toThrow(
      /limitSendsTo: maxMessageBytes must be a positive integer, got 0/,
    );
    // Not lower than its own: nothing changes.
    p.client.limitSendsTo?.(20_000, "the peer's limit");
    let err = await p.client.send(new Uint8Array(12_000)).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/larger than maxMessageBytes \(9\.77 kiB\)$/);
    p.client.limitSendsTo?.(1000, "the peer's limit");
    err = await p.client.send(new Uint8Array(2000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MessageTooLargeError);
    expect((err as MessageTooLargeError).limit).toBe(1000);
    expect((err as MessageTooLargeError).whose).toBe("the peer's limit");
    expect((err as Error).message).toMatch(
      /^cannot send a message of 1\.\d\d kiB \(\d+ bytes\): larger than the peer's limit \(0\.98 kiB\)$/,
    );
    await p.client.send(new Uint8Array(500));
    expect(await p.server.recv()).toEqual(new Uint8Array(500));
  });

  it("a send's own limit (a requester's, said in its request) applies to it alone, the lower one winning", async () => {
    const p = await commPair("tcp://127.0.0.1:0", { maxMessageBytes: 10_000 });
    cleanup.push(async () => {
      p.client.abort();
      await p.listener.close();
    });
    expect(p.client.maxMessageBytes).toBe(10_000);
    const once = { maxMessageBytes: 1000, whose: "the maxMessageBytes of tcp://a" };
    let err = await p.client.send(new Uint8Array(2000), once).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MessageTooLargeError);
    expect((err as Error).message).toMatch(
      /^cannot send a message of 1\.\d\d kiB \(\d+ bytes\): larger than the maxMessageBytes of tcp:\/\/a \(0\.98 kiB\)$/,
    );
    // Only that send: the next one of the same size goes.
    await p.client.send(new Uint8Array(2000));
    expect(await p.server.recv()).toEqual(new Uint8Array(2000));
    // Not lower than the comm's own: the comm's own is named.
    err = await p.client
      .send(new Uint8Array(12_000), { maxMessageBytes: 20_000, whose: "x" })
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/larger than maxMessageBytes \(9\.77 kiB\)$/);
    // A standing peer limit that is lower wins over it.
    p.client.limitSendsTo?.(1500, "the peer's limit");
    err = await p.client
      .send(new Uint8Array(1800), { maxMessageBytes: 5000, whose: "x" })
      .catch((e: unknown) => e);
    expect((err as MessageTooLargeError).whose).toBe("the peer's limit");
    err = await p.client.send(new Uint8Array(1200), once).catch((e: unknown) => e);
    expect((err as MessageTooLargeError).whose).toBe("the maxMessageBytes of tcp://a");
    expect(p.client.isClosed).toBe(false);
  });

  it("a peer that resets the connection after a large message was sent to it: the error names its size", async () => {
    let accepted!: (c: Comm) => void;
    const serverP = new Promise<Comm>((resolve) => {
      accepted = resolve;
    });
    const listener = await listen("tcp://127.0.0.1:0", (c) => accepted(c), {
      maxMessageBytes: 100_000,
    });
    const client = await connect(listener.address);
    const server = await serverP;
    cleanup.push(async () => {
      client.abort();
      await listener.close();
    });
    // Much more than one read takes: the receiver resets the connection with bytes unread.
    const sent = client.send(new Uint8Array(4 * 2 ** 20)).catch((e: unknown) => e);
    expect(await iterationError(server)).toBeInstanceOf(MessageTooLargeError);
    const { error } = await client.closed;
    const errors = [error, await sent].filter((e) => e instanceof Error);
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) {
      expect((e as Error).message).toMatch(
        /(ECONNRESET|EPIPE).* \(after a message of 4\.00 MiB was sent to it: larger than the peer's --max-message-bytes\? Its log says\)$/,
      );
    }
  });

  it("a reset after the peer answered a large message does not name that message", async () => {
    // A raw server: it answers, then resets the connection (which a weft listener does not).
    let peer!: Socket;
    const server = createServer((socket) => {
      peer = socket;
      socket.once("data", () => {
        for (const f of framesOf(messageSegments(encodeMessage("got it")), 1 << 20)) {
          socket.write(f);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = await connect(`tcp://127.0.0.1:${port}`);
    cleanup.push(() => {
      client.abort();
      server.close();
    });
    await client.send(new Uint8Array(256 * 1024));
    expect(await client.recv()).toBe("got it");
    peer.resetAndDestroy();
    const { error } = await client.closed;
    expect(error?.message).toMatch(/ECONNRESET/);
    expect(error?.message).not.toMatch(/after a message/);
  });

  it("receiving more than maxMessageBytes closes the comm with a MessageTooLargeError", async () => {
    const { socket, server } = await rawPeer(1024, 1500);
    socket.write(Buffer.concat([frameHeader(1000, true), Buffer.alloc(1000), frameHeader(1000)]));
    const err = await iterationError(server);
    expect(err).toBeInstanceOf(MessageTooLargeError);
    expect(isNetworkError(await server.recv().catch((e: unknown) => e))).toBe(false);
  });

  it("a message that cannot be encoded rejects with a SerializationError; the comm stays open", async () => {
    const p = await commPair("tcp://127.0.0.1:0");
    cleanup.push(async () => {
      p.client.abort();
      await p.listener.close();
    });
    await expect(p.client.send({ f: () => 1 })).rejects.toBeInstanceOf(SerializationError);
    await p.client.send("ok");
    expect(await p.server.recv()).toBe("ok");
  });

  it("connection refused is a ConnectError with code ECONNREFUSED", async () => {
    const listener = await listen("tcp://127.0.0.1:0", () => {});
    await listener.close();
    const err = await connect(listener.address).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe("ECONNREFUSED");
    expect((err as Error).message).toBe(`connection to ${listener.address} refused (ECONNREFUSED)`);
  });

  it("a peer that vanishes (socket destroyed) closes the comm", async () => {
    const { socket, server } = await rawPeer();
    socket.destroy();
    await server.closed;
    await expect(server.send("x")).rejects.toBeInstanceOf(CommClosedError);
  });

  it("awaiting sends applies backpressure and everything arrives", async () => {
    const p = await commPair("tcp://127.0.0.1:0");
    cleanup.push(async () => {
      p.client.abort();
      await p.listener.close();
    });
    const chunk = new Uint8Array(1024 * 1024);
    const sender = (async () => {
      for (let i = 0; i < 64; i++) await p.client.send({ i, chunk });
    })();
    for (let i = 0; i < 64; i++) {
      const m = (await p.server.recv()) as { i: number; chunk: Uint8Array };
      expect(m.i).toBe(i);
      expect(m.chunk.length).toBe(chunk.length);
    }
    await sender;
  });

  it("a peer that stops reading is cut off once what was sent to it stalls", async () => {
    const { socket, server } = await rawPeer(undefined, undefined, { stallTimeoutMs: 300 });
    // What the peer sent before it stopped reading stays readable after the cut.
    const { encodeMessage } = await import("./wireCodec.ts");
    const { messageSegments } = await import("./messageLayout.ts");
    const { framesOf } = await import("./framing.ts");
    socket.write(Buffer.concat(framesOf(messageSegments(encodeMessage({ n: 1 })), 1024)));
    socket.pause(); // reads nothing: the kernel's buffers fill, then the send waits
    const big = new Uint8Array(40 * 1024 * 1024); // 2.5 × 16 MiB: 750 ms allowed
    const t0 = performance.now();
    const sent = server.send({ big }).catch((e: unknown) => e);
    // A send queued behind it fails with the same reason, not "Cannot call write
    // after a stream was destroyed".
    const queued = server.send({ big }).catch((e: unknown) => e);
    const { error } = await server.closed;
    expect(error).toBeInstanceOf(CommClosedError);
    expect(error?.message).toMatch(
      /stopped reading: \d+ bytes sent to it were not taken for \d+ ms/,
    );
    expect(performance.now() - t0).toBeGreaterThanOrEqual(700);
    for (const failed of [await sent, await queued]) {
      expect(failed).toBeInstanceOf(CommClosedError);
      expect((failed as Error).message).toMatch(/stopped reading: \d+ bytes sent to it/);
    }
    expect(await server.recv()).toEqual({ n: 1 });
    await expect(server.recv()).rejects.toBeInstanceOf(CommClosedError);
  });

  it("a send under way when the peer resets the connection rejects: it was not taken", async () => {
    const { socket, server } = await rawPeer();
    socket.pause(); // reads nothing: the send waits for the kernel's buffers
    socket.write(Buffer.concat(framesOf(messageSegments(encodeMessage({ n: 1 })), 1024)));
    expect(await server.recv()).toEqual({ n: 1 });
    const sent = server.send({ big: new Uint8Array(32 * 1024 * 1024) }).then(
      () => "taken",
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 100));
    socket.resetAndDestroy();
    // Before, the write's callback came without an error before the comm heard of the
    // reset, and the send resolved as if the peer had taken it.
    expect(await sent).toBeInstanceOf(CommClosedError);
  });

  it("a send the connection broke under closes the comm, what arrived before staying readable", async () => {
    const { socket, server } = await rawPeer();
    socket.pause(); // reads nothing: the send waits for the kernel's buffers
    socket.write(Buffer.concat(framesOf(messageSegments(encodeMessage({ n: 1 })), 1024)));
    // Arrived, and left unread.
    const unread = () => (server as unknown as { queue: { size: number } }).queue.size;
    for (let i = 0; i < 100 && unread() === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(unread()).toBe(1);
    const sent = server.send({ big: new Uint8Array(32 * 1024 * 1024) }).then(
      () => "taken",
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 100));
    socket.resetAndDestroy();
    const failed = await sent;
    expect(failed).toBeInstanceOf(CommClosedError);
    // Closed with the failure, as its socket's close would: a sender's abort then (a
    // BatchedSend's, on the failed send) dropped the message not yet read. With the
    // send's own error, so that a reader can tell it is the failure said already.
    expect(server.isClosed).toBe(true);
    expect((await server.closed).error).toBe(failed);
    server.abort();
    expect(await server.recv()).toEqual({ n: 1 });
  });

  it("a peer that reads late, within the stall timeout, is not cut off", async () => {
    const { socket, server } = await rawPeer(undefined, undefined, { stallTimeoutMs: 3_000 });
    socket.pause();
    let received = 0;
    socket.on("data", (chunk: Buffer) => {
      received += chunk.length;
    });
    const big = new Uint8Array(16 * 1024 * 1024); // more than the kernel's buffers hold
    const sent = server.send({ big });
    await new Promise((r) => setTimeout(r, 300));
    socket.resume();
    await sent;
    expect(server.isClosed).toBe(false);
    // The rest is in the kernel's buffers on its way.
    for (let i = 0; i < 200 && received <= big.length; i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(received).toBeGreaterThan(big.length);
  });

  it("a peer that sends while it reads nothing is not cut off: it holds its reading back", async () => {
    const { socket, server } = await rawPeer(undefined, undefined, { stallTimeoutMs: 1_000 });
    socket.pause(); // as a server holding back a requester until its answers are taken
    const frame = Buffer.concat(framesOf(messageSegments(encodeMessage({ n: 1 })), 1024));
    const sent = server.send({ big: new Uint8Array(16 * 1024 * 1024) }).then(
      () => "taken",
      (e: unknown) => e,
    );
    // Three times the stall timeout, the peer sending all along (its answers, say).
    for (let i = 0; i < 60; i++) {
      socket.write(frame);
      await new Promise((r) => setTimeout(r, 50));
    }
    // Before, cut after 1 s though the peer was alive and sending.
    expect(server.isClosed).toBe(false);
    socket.resume();
    expect(await sent).toBe("taken");
    for (let i = 0; i < 60; i++) expect(await server.recv()).toEqual({ n: 1 });
  });

  it("stops reading a peer once 16 MiB it sent are unread, and reads on as they are read", async () => {
    const p = await cleanedPair();
    const chunk = new Uint8Array(1024 * 1024);
    const count = 96; // 96 MiB: more than the bound and the kernel's buffers together
    let taken = 0;
    const sends = Array.from({ length: count }, (_, i) =>
      p.client.send({ i, chunk }).then(() => {
        taken++;
      }),
    );
    // The server reads nothing until the sender's progress stops (or every send was taken).
    let last = -1;
    for (let quiet = 0; quiet < 4 && taken < count; ) {
      await new Promise((r) => setTimeout(r, 100));
      quiet = taken === last ? quiet + 1 : 0;
      last = taken;
    }
    // Without the bound, the server's queue took all 96 MiB and every send resolved.
    expect(taken).toBeLessThan(count);
    for (let i = 0; i < count; i++) {
      const m = (await p.server.recv()) as { i: number; chunk: Uint8Array };
      expect(m.i).toBe(i);
      expect(m.chunk.length).toBe(chunk.length);
    }
    await Promise.all(sends);
    expect(taken).toBe(count);
  });

  it("a comm that stopped reading still sees the peer's close once closed itself", async () => {
    const p = await cleanedPair();
    const chunk = new Uint8Array(1024 * 1024);
    const sends = Array.from({ length: 40 }, (_, i) => p.client.send({ i, chunk }).catch(() => {}));
    await new Promise((r) => setTimeout(r, 300));
    const closing = p.server.close();
    // The peer's sends go on being read, and its close ends the comm in an orderly way.
    await Promise.all(sends);
    await p.client.close();
    await closing;
    expect((await p.server.closed).error).toBeNull();
    // Not cut after the close's grace of 5 s, with the rest of the peer's sends unread.
    for (let i = 0; i < 40; i++) expect(((await p.server.recv()) as { i: number }).i).toBe(i);
  });

  it("a forwarding comm passes task data on unjoined and unread, whatever the frame size", async () => {
    const n = 1 << 20;
    const floats = new Float64Array(new ArrayBuffer(n + 8), 8, n / 8).map((_, i) => i / 7);
    const buf = Buffer.alloc(n + 5, 3);
    const raw = new Uint8Array(n).fill(4).buffer;
    const objects = Array.from({ length: 4000 }, (_, i) => ({ i, s: `value ${i}` }));
    const msg = {
      op: "compute-task",
      args: [floats, { buf }, raw],
      cloned: [new ClonedValue(new Int32Array(n / 4).fill(-2)), new ClonedValue(objects)],
    };
    for (const maxFrameBytes of [64 * 1024, undefined]) {
      // client → (forwarding) scheduler → worker
      const fromClient = await cleanedPair({ maxFrameBytes, forwardOutOfBandBuffers: true });
      const toWorker = await cleanedPair({ maxFrameBytes });
      await fromClient.client.send(msg);
      const mid = (await fromClient.server.recv()) as {
        args: [unknown, { buf: unknown }, unknown];
        cloned: unknown[];
      };
      const held = [mid.args[0], mid.args[1].buf, mid.args[2], mid.cloned[0]];
      expect(held.map((h) => h?.constructor)).toEqual([
        ForwardedBytes,
        ForwardedBytes,
        ForwardedBytes,
        ForwardedClonedValue,
      ]);
      // Views of the chunks as they came off the socket, not one joined buffer.
      for (const h of held as ForwardedBytes[]) expect(h.pieces.length).toBeGreaterThan(1);
      expect(mid.cloned[1]).toBeInstanceOf(ClonedValue); // serialized: read
      await toWorker.client.send(mid);
      const out = (await toWorker.server.recv()) as {
        args: [unknown, { buf: unknown }, unknown];
        cloned: ClonedValue[];
      };
      const [f, { buf: b }, r] = out.args;
      expect(f).toBeInstanceOf(Float64Array);
      expect(Buffer.isBuffer(b)).toBe(true);
      expect(r).toBeInstanceOf(ArrayBuffer);
      expect(out.cloned[0].value).toBeInstanceOf(Int32Array);
      // The same bytes (compared as bytes: element by element would take seconds).
      const pairs = [
        [f, floats],
        [b, buf],
        [r, raw],
        [out.cloned[0].value, msg.cloned[0].value],
      ] as const;
      for (const [got, sent] of pairs) expect(bytesOf(got).equals(bytesOf(sent))).toBe(true);
      expect(out.cloned[1].value).toEqual(objects);
      // Read in place, aligned, as from the client directly.
      expect((f as Float64Array).byteOffset % 8).toBe(0);
      expect((out.cloned[0].value as Int32Array).byteOffset % 4).toBe(0);
    }
  });

  it("rejects bad stall and keepalive timeouts", async () => {
    await expect(listen("tcp://127.0.0.1:0", () => {}, { stallTimeoutMs: 0 })).rejects.toThrow(
      /stallTimeoutMs must be a positive number of ms, .*, got 0$/,
    );
    await expect(listen("tcp://127.0.0.1:0", () => {}, { keepAliveMs: -1 })).rejects.toThrow(
      /keepAliveMs must be 0 \(no keepalive\) or an integer of ms from 1000 to 32767000 .*, got -1$/,
    );
    await expect(async () =>
      connect("tcp://127.0.0.1:1", { stallTimeoutMs: Number.NaN }),
    ).rejects.toThrow(/stallTimeoutMs must be a positive number/);
    // Longer than a Node.js timer waits: it would fire every millisecond.
    await expect(async () =>
      connect("tcp://127.0.0.1:1", { stallTimeoutMs: 2 ** 31 }),
    ).rejects.toThrow(
      /at most 2147483647 \(about 24.8 days\), or Infinity \(no limit\), got 2147483648$/,
    );
    // Node.js counts keepalive in whole seconds: less than one is the system's 2 h.
    for (const keepAliveMs of [1, 999, 32_768_000]) {
      await expect(listen("tcp://127.0.0.1:0", () => {}, { keepAliveMs })).rejects.toThrow(
        /^keepAliveMs must be 0 \(no keepalive\) or an integer of ms from 1000 to 32767000/,
      );
    }
    // The bounds, and no limit at all, are taken.
    for (const options of [
      { keepAliveMs: 0, stallTimeoutMs: Infinity },
      { keepAliveMs: 1000, stallTimeoutMs: 2 ** 31 - 1 },
      { keepAliveMs: 32_767_000 },
    ]) {
      const l = await listen("tcp://127.0.0.1:0", () => {}, options);
      await l.close();
    }
  });

  it("a connect timeout of Infinity waits as long as the connection takes; one no timer can wait is refused", async () => {
    // A peer that accepts the TCP connection and never answers the TLS handshake.
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const peers: Socket[] = [];
    silent.on("connection", (s) => peers.push(s));
    cleanup.push(async () => {
      for (const s of peers) s.destroy();
      await new Promise((r) => silent.close(r));
    });
    const address = `tls://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const tls = testTls();
    await expect(connect(address, { tls, timeoutMs: 50 })).rejects.toThrow(
      `timed out connecting to ${address} after 50 ms`,
    );
    // Infinity: no timeout (a Node.js timer of Infinity fired after 1 ms): the signal ends it.
    const stop = new AbortController();
    const waiting = connect(address, {
      tls,
      timeoutMs: Number.POSITIVE_INFINITY,
      signal: stop.signal,
    });
    setTimeout(() => stop.abort(new Error("stopped waiting")), 50);
    await expect(waiting).rejects.toThrow("stopped waiting");
    // With the reason as given, as one aborted already rejects (throwIfAborted): a
    // reason that is no Error became a bare "aborted", where Client.connect's says its reason.
    const bare = new AbortController();
    const cut = connect(address, {
      tls,
      timeoutMs: Number.POSITIVE_INFINITY,
      signal: bare.signal,
    }).catch((e: unknown) => e);
    setTimeout(() => bare.abort("shutting down"), 50);
    expect(await cut).toBe("shutting down");
    for (const timeoutMs of [0, -5, Number.NaN, 2 ** 31]) {
      await expect(connect(address, { tls, timeoutMs }), String(timeoutMs)).rejects.toThrow(
        /^timeoutMs must be a positive number of ms, at most 2147483647 \(about 24.8 days\), or Infinity \(no limit\), got /,
      );
    }
  });

  it("both ends start TCP keepalive after 7 s of silence by default, at keepAliveMs if given, never with 0", async () => {
    const keepAlive = vi.spyOn(NetSocket.prototype, "setKeepAlive");
    try {
      const calls = async (options: ListenOptions) => {
        keepAlive.mockClear();
        const p = await commPair("tcp://127.0.0.1:0", options);
        const made = keepAlive.mock.calls.map((c) => [...c]);
        p.client.abort();
        p.server.abort();
        await p.listener.close();
        return made;
      };
      // Dask's TCP comms: the vanished peer of a connection is noticed.
      expect(await calls({})).toEqual([
        [true, 7_000],
        [true, 7_000],
      ]);
      expect(await calls({ keepAliveMs: 2_000 })).toEqual([
        [true, 2_000],
        [true, 2_000],
      ]);
      expect(await calls({ keepAliveMs: 0 })).toEqual([]);
    } finally {
      keepAlive.mockRestore();
    }
  });

  it("a bare host:port is TCP, to listen at and to connect to", async () => {
    const accepted: Comm[] = [];
    const listener = await listen("127.0.0.1:0", (c) => accepted.push(c));
    cleanup.push(async () => {
      for (const c of accepted) c.abort();
      await listener.close();
    });
    expect(listener.address).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    const comm = await connect(listener.address.slice("tcp://".length));
    expect(comm.peerAddress).toBe(listener.address);
    await comm.send("plain");
    for (let i = 0; i < 100 && accepted.length === 0; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(await accepted[0].recv()).toBe("plain");
    await comm.close();
  });

  it("rejects unknown schemes and bad maxFrameBytes", async () => {
    await expect(async () => connect("udp://1.2.3.4:5")).rejects.toThrow(
      /unknown address scheme "udp"/,
    );
    await expect(async () => connect(4000n as never)).rejects.toThrow(
      'expected an address string, got "4000n"',
    );
    await expect(listen("tcp://127.0.0.1:0", () => {}, { maxFrameBytes: 0 })).rejects.toThrow(
      RangeError,
    );
    await expect(listen("tcp://127.0.0.1:0", () => {}, { maxFrameBytes: 2 ** 31 })).rejects.toThrow(
      /maxFrameBytes must be an integer from 1 to 2147483647/,
    );
    await expect(listen("tcp://127.0.0.1:0", () => {}, { maxMessageBytes: 1.5 })).rejects.toThrow(
      /maxMessageBytes must be an integer from 1 to \d+ \(the largest Node.js buffer\), got 1.5/,
    );
    await expect(
      listen("tcp://127.0.0.1:0", () => {}, { maxMessageBytes: 2 ** 40 }),
    ).rejects.toThrow(/maxMessageBytes must be an integer from 1 to/);
  });

  it("rejects options that are not an object, a signal that is not one, a handler that is not a function", async () => {
    for (const address of ["tcp://127.0.0.1:1", "inproc://nobody/1"]) {
      // null crashed as a destructuring deep in the transport.
      await expect(connect(address, null as never)).rejects.toThrow(
        new TypeError("connect: options must be an object, got null"),
      );
      await expect(connect(address, { signal: 5 as never })).rejects.toThrow(
        new TypeError("connect: signal must be an AbortSignal, got 5"),
      );
    }
    await expect(listen("tcp://127.0.0.1:0", () => {}, 5 as never)).rejects.toThrow(
      new TypeError("listen: options must be an object, got 5"),
    );
    // Unknown options were ignored: { timeout: 500 } waited the default 30 s.
    await expect(connect("tcp://127.0.0.1:1", { timeout: 500 } as never)).rejects.toThrow(
      new TypeError('connect: unknown option "timeout" (did you mean timeoutMs?)'),
    );
    await expect(
      connect("tcp://127.0.0.1:1", { forwardOutOfBandBuffers: true } as never),
    ).rejects.toThrow(/^connect: unknown option "forwardOutOfBandBuffers" \(the options are /);
    await expect(
      listen("tcp://127.0.0.1:0", () => {}, { maxFrameByte: 1024 } as never),
    ).rejects.toThrow(
      new TypeError('listen: unknown option "maxFrameByte" (did you mean maxFrameBytes?)'),
    );
    // Accepted, it aborted every connection without a word.
    for (const address of ["tcp://127.0.0.1:0", "inproc://"]) {
      await expect(listen(address, 5 as never)).rejects.toThrow(
        new TypeError("listen: the handler must be a function of each accepted comm, got 5"),
      );
    }
  });
});

describe("a closed TCP comm", () => {
  it("is garbage once dropped: its stall timer, armed by a send, goes with it", () => {
    // In a fresh process with gc(). The timer (a minute) held the comm, and through its
    // socket the closed client or retired worker whose it was.
    const script = `
      const { connect, listen } = await import(process.argv[1]);
      const listener = await listen("tcp://127.0.0.1:0", (comm) => void comm.recv().catch(() => {}));
      let ref;
      await (async () => {
        const comm = await connect(listener.address);
        await comm.send({ op: "x" });
        await comm.close();
        ref = new WeakRef(comm);
      })();
      await new Promise((r) => setTimeout(r, 50));
      gc();
      gc();
      await listener.close();
      console.log(JSON.stringify({ collected: ref.deref() === undefined }));
    `;
    const got = runGcScript(script, [fileURLToPath(new URL("./connect.ts", import.meta.url))]);
    expect(got).toEqual({ collected: true });
  });
});
