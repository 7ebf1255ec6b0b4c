import { type AddressInfo, createServer, connect as netConnect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { parseHostPort } from "../util/address.ts";
import { ClonedValue } from "./clonedValue.ts";
import type { Comm } from "./comm.ts";
import { connect, listen } from "./connect.ts";
import { SerializationError } from "./errors.ts";
import { framesOf } from "./framing.ts";
import { messageSegments } from "./messageLayout.ts";
import { rpc, serveRpc } from "./rpc.ts";
import { TcpComm } from "./tcp.ts";
import { UnreadableValueError } from "./unreadableValue.ts";
import { decodeMessage, encodeMessage } from "./wireCodec.ts";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** `msg` as it goes on the wire, in frames. */
function wire(msg: unknown): Buffer {
  return Buffer.concat(framesOf(messageSegments(encodeMessage(msg)), 1 << 20));
}

/**
 * `msg`, holding one cloned value, encoded with the serialized bytes of that
 * value cut short: the framing and the envelope intact, the value unreadable
 * (as a value one V8 serializes and another cannot deserialize).
 */
function encodedWithUnreadableValue(msg: unknown) {
  const { payload, buffers } = encodeMessage(msg);
  expect(buffers).toHaveLength(1);
  const serialized = buffers[0] as Uint8Array;
  return { payload, buffers: [serialized.subarray(0, serialized.length - 3)] };
}

const UPDATE = {
  op: "update_data",
  id: 7,
  args: { data: new Map([["x", new ClonedValue({ a: 1, b: "xyz" })]]) },
};

/**
 * A TCP listener whose accepted comms `serve` handles, and a connection to it:
 * a comm, and its socket to write raw bytes on.
 */
async function connection(serve: (c: Comm) => void): Promise<{ comm: Comm; socket: Socket }> {
  const served: Comm[] = [];
  const listener = await listen("tcp://127.0.0.1:0", (c) => {
    served.push(c);
    serve(c);
  });
  const { host, port } = parseHostPort(listener.address);
  const socket = netConnect({ host, port });
  await new Promise((r) => socket.once("connect", r));
  const comm = new TcpComm(socket);
  cleanup.push(async () => {
    comm.abort();
    for (const c of served) c.abort();
    await listener.close();
  });
  return { comm, socket };
}

describe("a message whose framing and envelope are intact but a value in it cannot be read", () => {
  it("decodes as an UnreadableValueError with the message's op and id", () => {
    const { payload, buffers } = encodedWithUnreadableValue(UPDATE);
    let thrown: unknown;
    try {
      decodeMessage(payload, buffers);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UnreadableValueError);
    expect(thrown).toBeInstanceOf(SerializationError);
    expect(thrown).toMatchObject({ op: "update_data", id: 7 });
    expect((thrown as Error).message).toMatch(/^malformed frame: /);
  });

  it("an rpc server answers that request with the error, naming the op, and keeps serving the connection", async () => {
    const { comm, socket } = await connection((c) => {
      void serveRpc(c, { update_data: () => "stored", ping: () => "pong" });
    });
    const answers = comm[Symbol.asyncIterator]();
    socket.write(
      Buffer.concat(framesOf(messageSegments(encodedWithUnreadableValue(UPDATE)), 1 << 20)),
    );
    const first = (await answers.next()).value as { id: number; error: Record<string, unknown> };
    expect(first.id).toBe(7);
    expect(first.error).toMatchObject({
      name: "SerializationError",
      message: expect.stringMatching(/^update_data: a value in the request cannot be read: /),
    });
    socket.write(wire({ op: "ping", id: 8 }));
    expect((await answers.next()).value).toEqual({ id: 8, result: "pong" });
  });

  it("an rpc client fails that call alone with the error, and keeps the connection", async () => {
    // A server writing its answers raw: the first one's value unreadable.
    const server = createServer((socket) => {
      socket.on("data", () => {});
      socket.write(
        Buffer.concat(
          framesOf(
            messageSegments(
              encodedWithUnreadableValue({ id: 1, result: { data: new ClonedValue([1, 2]) } }),
            ),
            1 << 20,
          ),
        ),
      );
      socket.write(wire({ id: 2, result: "fine" }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    const comm = await connect(`tcp://127.0.0.1:${port}`);
    cleanup.push(() => {
      comm.abort();
      return new Promise<void>((r) => server.close(() => r()));
    });
    const client = rpc(comm);
    const first = client.call("get_data", { keys: ["x"] }).catch((e: unknown) => e);
    const second = client.call("get_data", { keys: ["y"] });
    const err = await first;
    expect(err).toBeInstanceOf(SerializationError);
    expect((err as Error).message).toMatch(
      new RegExp(
        `^get_data on tcp://127\\.0\\.0\\.1:${port}: a value in the answer cannot be read: `,
      ),
    );
    expect(await second).toBe("fine");
    expect(comm.isClosed).toBe(false);
  });
});
