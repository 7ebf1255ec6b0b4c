/**
 * An rpc a pool thread makes through its worker's main thread (a task's
 * client) whose answer holds a value that cannot be read: the call fails
 * alone, saying so, and the connection serves on, as an rpc of the main
 * thread over TCP does (`unreadableValue.ts`).
 */

import { afterEach, describe, expect, it, vi } from "vitest";
import { ThreadConnection } from "../worker/threadConnection.ts";
import { dialThroughBridge, serveBridge } from "./bridge.ts";
import { ClonedValue } from "./clonedValue.ts";
import type { Comm } from "./comm.ts";
import { CommClosedError, SerializationError } from "./errors.ts";
import { rpc, serveRpc } from "./rpc.ts";
import { type CommPair, commPair } from "./testPair.ts";

/** A value whose bytes the sending side cuts short, so that no receiver can read them. */
const UNREADABLE = "unreadable on arrival";

vi.mock("./clonedBytes.ts", async (original) => {
  const actual = await original<typeof import("./clonedBytes.ts")>();
  return {
    ...actual,
    clonedBytes(value: unknown) {
      const out = actual.clonedBytes(value);
      const marked = (value as { mark?: unknown } | null)?.mark === UNREADABLE;
      return marked ? { ...out, bytes: out.bytes.subarray(0, out.bytes.length - 3) } : out;
    },
  };
});

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

let channels = 0;

/**
 * A bridged connection in this one thread to a fresh TCP pair's server end:
 * the "thread" end dials, the "main thread" end serves it with the pair's
 * client end wrapped as a pool executor wraps it.
 */
async function bridged(): Promise<{ pair: CommPair; thread: Comm }> {
  const pair = await commPair("tcp://127.0.0.1:0");
  const executorChannel = `bridge-unreadable-test-${process.pid}-${++channels}`;
  const ended = new AbortController();
  let served: Promise<void> = Promise.resolve();
  const thread = await dialThroughBridge(
    executorChannel,
    (dial) => {
      served = serveBridge(
        executorChannel,
        dial,
        async () => new ThreadConnection(pair.client),
        ended.signal,
        1 << 20,
      );
    },
    pair.listener.address,
    5_000,
  );
  cleanup.push(async () => {
    thread.abort();
    ended.abort();
    await served;
    pair.server.abort();
    await pair.listener.close();
  });
  return { pair, thread };
}

describe("a bridged TCP connection", () => {
  it("an rpc whose answer holds a value that cannot be read fails alone; the connection serves on", async () => {
    const { pair, thread } = await bridged();
    void serveRpc(pair.server, {
      value: (args) => new ClonedValue(args.unreadable ? { mark: UNREADABLE, n: [1] } : { n: 2 }),
    });
    const client = rpc(thread);
    const err = await client.call("value", { unreadable: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SerializationError);
    expect((err as Error).message).toMatch(
      /^value on tcp:\/\/127\.0\.0\.1:\d+: a value in the answer cannot be read: Unable to deserialize cloned data/,
    );
    expect(thread.isClosed).toBe(false);
    expect(ClonedValue.unwrap(await client.call("value", {}))).toEqual({ n: 2 });
  });

  it("closes under a reader that did not ask to receive such a message, as a TCP comm does", async () => {
    const { pair, thread } = await bridged();
    await pair.server.send({ op: "stream", value: new ClonedValue({ mark: UNREADABLE }) });
    const err = await thread.recv().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommClosedError);
    expect(String((err as Error).cause)).toMatch(/Unable to deserialize cloned data/);
    expect(thread.isClosed).toBe(true);
  });
});
