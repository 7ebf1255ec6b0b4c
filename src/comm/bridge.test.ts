import { afterEach, describe, expect, it } from "vitest";
import { dialThroughBridge, serveBridge } from "./bridge.ts";
import type { Comm } from "./comm.ts";
import { MessageTooLargeError } from "./errors.ts";
import { type CommPair, commPair } from "./testPair.ts";

const cleanup: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

let channels = 0;

/**
 * A bridged connection in this one thread: the "thread" end dials through
 * channels that the "main thread" end, {@link serveBridge}, serves with the
 * client end of a fresh pair at `address`.
 */
async function bridged(address: string): Promise<{ pair: CommPair; thread: Comm }> {
  const pair = await commPair(address);
  const executorChannel = `bridge-test-${process.pid}-${++channels}`;
  const ended = new AbortController();
  let served: Promise<void> = Promise.resolve();
  const thread = await dialThroughBridge(
    executorChannel,
    (dial) => {
      served = serveBridge(executorChannel, dial, async () => pair.client, ended.signal);
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

describe("a bridged connection", () => {
  it("passes messages both ways", async () => {
    const { pair, thread } = await bridged("tcp://127.0.0.1:0");
    await thread.send({ op: "hello", n: 1 });
    expect(await pair.server.recv()).toEqual({ op: "hello", n: 1 });
    await pair.server.send("back");
    expect(await thread.recv()).toBe("back");
  });

  it("over TCP, after limitSendsTo, a larger send rejects on the thread naming the limit; the comm stays open", async () => {
    const { pair, thread } = await bridged("tcp://127.0.0.1:0");
    expect(thread.limitSendsTo).toBeTypeOf("function");
    expect(() => thread.limitSendsTo?.(0, "x")).toThrow(
      /^limitSendsTo: maxMessageBytes must be a positive integer, got 0$/,
    );
    thread.limitSendsTo?.(1000, "the peer's limit");
    const err = await thread.send(new Uint8Array(2000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MessageTooLargeError);
    expect((err as MessageTooLargeError).limit).toBe(1000);
    expect((err as MessageTooLargeError).whose).toBe("the peer's limit");
    // The size counted is the message's on TCP, as the peer counts it.
    expect((err as Error).message).toMatch(
      /^cannot send a message of 1\.\d\d kiB \(\d+ bytes\): larger than the peer's limit \(0\.98 kiB\)$/,
    );
    expect(thread.isClosed).toBe(false);
    await thread.send(new Uint8Array(500));
    expect(await pair.server.recv()).toEqual(new Uint8Array(500));
  });

  it("in-process, where nothing limits sizes, has no limitSendsTo", async () => {
    const { pair, thread } = await bridged("inproc://bridge-test");
    expect(thread.limitSendsTo).toBeUndefined();
    await thread.send("x".repeat(5000));
    expect(await pair.server.recv()).toBe("x".repeat(5000));
  });
});
