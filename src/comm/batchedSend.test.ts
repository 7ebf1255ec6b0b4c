import { afterEach, describe, expect, it, vi } from "vitest";
import { BatchedSend } from "./batchedSend.ts";
import { CommClosedError, SerializationError } from "./errors.ts";
import { type CommPair, commPair } from "./testPair.ts";

const pairs: CommPair[] = [];
afterEach(async () => {
  for (const p of pairs.splice(0)) {
    p.client.abort();
    p.server.abort();
    await p.listener.close();
  }
});

/** `n` turns of the event loop: what a batch due at the next turn waits for. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

async function pair(address = "inproc://"): Promise<CommPair> {
  const p = await commPair(address);
  pairs.push(p);
  return p;
}

describe.each(["inproc://", "tcp://127.0.0.1:0"])("BatchedSend over %s", (address) => {
  it("coalesces messages sent in one turn into one list", async () => {
    const { client, server } = await pair(address);
    const b = new BatchedSend(client, { intervalMs: 5 });
    b.send({ a: 1 });
    b.send({ b: 2 }, { c: 3 });
    expect(await server.recv()).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
    expect(b.batchCount).toBe(1);
    expect(b.messageCount).toBe(3);
  });

  it("tells onTaken of each batch once the transport took it, those of its messages dropped included", async () => {
    const { client, server } = await pair(address);
    const taken: unknown[][] = [];
    const b = new BatchedSend(client, {
      intervalMs: 0,
      onTaken: (batch) => taken.push([...batch]),
      onMessageError: () => {},
    });
    const unencodable = { f: () => 1 };
    b.send(1, 2);
    await b.flush();
    expect(taken).toEqual([[1, 2]]);
    b.send(3, unencodable, 4);
    await b.flush();
    expect(taken).toEqual([
      [1, 2],
      [3, unencodable, 4],
    ]);
    expect(await server.recv()).toEqual([1, 2]);
  });

  it("waits the interval between batches and keeps the order", async () => {
    const { client, server } = await pair(address);
    const b = new BatchedSend(client, { intervalMs: 30 });
    // Before the first batch goes, as the interval counts from its send: counted from
    // its arrival, a loaded host's delivery (13 ms once) came off the interval measured.
    const t0 = performance.now();
    b.send(1);
    const first = await server.recv();
    b.send(2);
    b.send(3);
    const second = await server.recv();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(20);
    expect([first, second]).toEqual([[1], [2, 3]]);
  });

  it("interval 0 sends at the next turn", async () => {
    const { client, server } = await pair(address);
    const b = new BatchedSend(client, { intervalMs: 0 });
    for (let i = 0; i < 5; i++) b.send(i);
    expect(await server.recv()).toEqual([0, 1, 2, 3, 4]);
    b.send(5);
    expect(await server.recv()).toEqual([5]);
  });

  it("flush sends what is buffered without waiting for the interval, and goes on", async () => {
    const { client, server } = await pair(address);
    const b = new BatchedSend(client, { intervalMs: 60_000 });
    await b.flush(); // nothing buffered
    b.send("a");
    expect(await server.recv()).toEqual(["a"]);
    b.send("b", "c"); // the next batch is due in a minute
    await b.flush();
    expect(b.pending).toBe(0);
    expect(await server.recv()).toEqual(["b", "c"]);
    b.send("d");
    await b.flush();
    expect(await server.recv()).toEqual(["d"]);
    expect(b.batchCount).toBe(3);
    b.abort();
    await b.flush(); // closed: nothing to do
  });

  it("abort drops what is buffered, refuses more, and leaves the comm open", async () => {
    const { client, server } = await pair(address);
    const b = new BatchedSend(client, { intervalMs: 0 });
    b.send("dropped");
    b.abort();
    expect(b.pending).toBe(0);
    expect(() => b.send("late")).toThrow(CommClosedError);
    await new Promise((r) => setTimeout(r, 20));
    expect(client.isClosed).toBe(false);
    // The comm's next message is the first thing the peer gets: the buffer never went out.
    await client.send("direct");
    expect(await server.recv()).toBe("direct");
  });

  it("ends a batch with a message sent alone, no two in one batch, in order", async () => {
    const { client, server } = await pair(address);
    const b = new BatchedSend(client, { intervalMs: 0, alone: (m) => m === "big" });
    b.send(1, 2, "big", "big", 3, 4);
    // The small messages before it go with it: before, a batch of their own.
    expect(await server.recv()).toEqual([1, 2, "big"]);
    expect(await server.recv()).toEqual(["big"]);
    expect(await server.recv()).toEqual([3, 4]);
    expect(b.batchCount).toBe(3);
    // flush and close send every batch, not only the first.
    b.send(5, "big", 6);
    await b.flush();
    expect(b.pending).toBe(0);
    b.send("big", 7);
    await b.close();
    const rest: unknown[] = [];
    for (let i = 0; i < 4; i++) rest.push(await server.recv());
    expect(rest).toEqual([[5, "big"], [6], ["big"], [7]]);
  });

  it("sends what a message sent alone left once the transport took it, not an interval later", async () => {
    const { client, server } = await pair(address);
    const b = new BatchedSend(client, { intervalMs: 60_000, alone: (m) => m === "big" });
    b.send(1, "big", "big", 2);
    // Before, each batch after the first waited its minute: 1,000 answers sent alone
    // (a client's concurrent who-has) took 1,000 intervals.
    const got: unknown[] = [];
    for (let i = 0; i < 3; i++) got.push(await server.recv());
    expect(got).toEqual([[1, "big"], ["big"], [2]]);
    // The batch that emptied the buffer is followed by the interval, as any other.
    b.send(3);
    await turns(5);
    expect(b.pending).toBe(1);
    await b.flush();
    expect(await server.recv()).toEqual([3]);
  }, 10_000);

  it("close flushes what is buffered, then refuses more", async () => {
    const { client, server } = await pair(address);
    const b = new BatchedSend(client, { intervalMs: 1000 });
    b.send("x");
    expect(await server.recv()).toEqual(["x"]);
    b.send("y");
    await b.close();
    expect(await server.recv()).toEqual(["y"]);
    expect(() => b.send("z")).toThrow(CommClosedError);
  });
});

describe("BatchedSend failures", () => {
  it("a comm closed by the peer makes send throw", async () => {
    const { client, server } = await pair();
    const b = new BatchedSend(client);
    await server.close();
    await client.closed;
    expect(() => b.send(1)).toThrow(CommClosedError);
  });

  it("a failed send reports the error and closes the stream", async () => {
    const { client } = await pair("tcp://127.0.0.1:0");
    const errors: unknown[] = [];
    const b = new BatchedSend(client, { intervalMs: 0, onError: (e) => errors.push(e) });
    b.send({ f: () => 1 });
    await new Promise((r) => setTimeout(r, 20));
    expect(errors).toHaveLength(1);
    expect(b.isClosed).toBe(true);
  });

  it("a stream that cannot send ends its connection, so that its peer learns of it", async () => {
    const { client, server } = await pair();
    const errors: unknown[] = [];
    const b = new BatchedSend(client, { intervalMs: 0, onError: (e) => errors.push(e) });
    // A failure that is not one message's fault (with onMessageError, those spoil only themselves).
    client.send = () => Promise.reject(new Error("the transport broke"));
    b.send({ op: "x" });
    await client.closed;
    await server.closed;
    expect(errors).toEqual([new Error("the transport broke")]);
    expect(b.isClosed).toBe(true);
  });

  it("a flush() before the batch's turn sends once at a time: a broken connection is one error", async () => {
    const { client } = await pair();
    const errors: unknown[] = [];
    const b = new BatchedSend(client, { intervalMs: 0, onError: (e) => errors.push(e) });
    let inFlight = 0;
    let most = 0;
    client.send = async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      throw new CommClosedError("send failed: This socket has been ended by the other party");
    };
    // Armed for the next turn; flushed now; more for that turn, which finds a send under way
    // (a worker resuming from SIGSTOP, its scheduler gone, logged the same error twice).
    b.send({ op: "a" });
    const flushed = b.flush();
    b.send({ op: "b" });
    await flushed;
    await new Promise((r) => setTimeout(r, 20));
    expect(most).toBe(1);
    expect(errors).toHaveLength(1);
  });

  it("with onMessageError, a message that cannot be sent spoils only itself", async () => {
    const { client, server } = await pair("tcp://127.0.0.1:0");
    const failed: unknown[] = [];
    const b = new BatchedSend(client, {
      intervalMs: 0,
      onMessageError: (err, msg) => failed.push([(err as Error).name, msg]),
      onError: () => failed.push("stream error"),
    });
    const bad = { op: "bad", f: () => 1 };
    b.send({ op: "a" }, bad, { op: "b" });
    expect(await server.recv()).toEqual([{ op: "a" }]);
    expect(await server.recv()).toEqual([{ op: "b" }]);
    expect(failed).toEqual([["SerializationError", bad]]);
    expect(b.isClosed).toBe(false);
    b.send(bad); // alone in its batch
    b.send({ op: "c" });
    expect(await server.recv()).toEqual([{ op: "c" }]);
    expect(failed).toHaveLength(2);
    expect(b.isClosed).toBe(false);
  });

  it("an onMessageError that throws ends the stream as a failed send does, said to onError", async () => {
    const { client, server } = await pair("tcp://127.0.0.1:0");
    const errors: unknown[] = [];
    const b = new BatchedSend(client, {
      intervalMs: 0,
      onMessageError: () => {
        throw new Error("the handler broke");
      },
      onError: (e) => errors.push(e),
    });
    b.send({ op: "a" }, { op: "bad", f: () => 1 }, { op: "b" });
    expect(await server.recv()).toEqual([{ op: "a" }]);
    await b.flush();
    await client.closed;
    expect(errors).toEqual([new Error("the handler broke")]);
    expect(b.isClosed).toBe(true);
    await b.close();
  });

  it("an onError that throws or rejects is a process warning; flush() and close() still resolve", async () => {
    const warned: string[] = [];
    const spy = vi.spyOn(process, "emitWarning").mockImplementation((w) => {
      warned.push(String(w));
    });
    try {
      for (const onError of [
        () => {
          throw new RangeError("cannot tell");
        },
        () => Promise.reject(new RangeError("cannot tell later")),
      ]) {
        const { client } = await pair();
        const b = new BatchedSend(client, { intervalMs: 0, onError });
        client.send = () => Promise.reject(new Error("the transport broke"));
        b.send({ op: "x" });
        // Before, the throw rejected the batch's send, unhandled: the process ended.
        await b.flush();
        await b.close();
        await turns(2);
        expect(b.isClosed).toBe(true);
      }
      expect(warned).toEqual([
        "BatchedSend onError failed: RangeError: cannot tell",
        "BatchedSend onError failed: RangeError: cannot tell later",
      ]);
    } finally {
      spy.mockRestore();
    }
  });

  it("an onMessageError whose promise rejects ends the stream as one that throws does", async () => {
    const { client, server } = await pair("tcp://127.0.0.1:0");
    const errors: unknown[] = [];
    const b = new BatchedSend(client, {
      intervalMs: 0,
      onMessageError: () => Promise.reject(new Error("the handler broke later")),
      onError: (e) => errors.push(e),
    });
    b.send({ op: "a" }, { op: "bad", f: () => 1 }, { op: "b" });
    expect(await server.recv()).toEqual([{ op: "a" }]);
    await client.closed;
    expect(errors).toEqual([new Error("the handler broke later")]);
    expect(b.isClosed).toBe(true);
    await b.close();
  }, 5_000);

  it("rejects a bad interval", async () => {
    const { client } = await pair();
    expect(() => new BatchedSend(client, { intervalMs: -1 })).toThrow(RangeError);
    expect(() => new BatchedSend(client, { intervalMs: Number.NaN })).toThrow(RangeError);
    // A stream that would never send anything.
    expect(() => new BatchedSend(client, { intervalMs: Number.POSITIVE_INFINITY })).toThrow(
      RangeError,
    );
    // Longer than a Node.js timer waits: it would fire after 1 ms, not after the interval.
    expect(() => new BatchedSend(client, { intervalMs: 2 ** 31 })).toThrow(
      "BatchedSend intervalMs must be a number of ms from 0 to 2147483647 (about 24.8 days), got 2147483648",
    );
    new BatchedSend(client, { intervalMs: 2 ** 31 - 1 }).abort();
  });

  it("a message that cannot be sent on a comm that closed meanwhile ends the stream, not only itself", async () => {
    const { client } = await pair();
    const told: string[] = [];
    const b = new BatchedSend(client, {
      intervalMs: 0,
      onMessageError: () => told.push("message"),
      onError: (e) => told.push(`stream: ${(e as Error).name}`),
    });
    client.send = () => {
      client.abort();
      return Promise.reject(new SerializationError("cannot encode"));
    };
    b.send({ op: "a" });
    await b.flush();
    expect(told).toEqual(["stream: SerializationError"]);
    expect(b.isClosed).toBe(true);
  });
});

describe("BatchedSend's pace and end", () => {
  /** `client` with sends that complete only when the test says so. */
  function heldSends(client: CommPair["client"]): { msg: unknown; done: () => void }[] {
    const sends: { msg: unknown; done: () => void }[] = [];
    client.send = (msg) => new Promise<void>((resolve) => sends.push({ msg, done: resolve }));
    return sends;
  }

  it("sends no batch while the previous one is still being sent (backpressure)", async () => {
    const { client } = await pair();
    const sends = heldSends(client);
    const b = new BatchedSend(client, { intervalMs: 0 });
    b.send(1);
    await turns(2);
    b.send(2);
    await turns(3);
    expect(sends.map((s) => s.msg)).toEqual([[1]]);
    sends[0].done();
    await turns(3);
    expect(sends.map((s) => s.msg)).toEqual([[1], [2]]);
    sends[1].done();
    await b.flush();
  });

  it("a flush that took what a batch due at the next turn would have sent leaves it nothing: no empty batch", async () => {
    const { client, server } = await pair();
    const b = new BatchedSend(client, { intervalMs: 0 });
    b.send("a"); // due at the next turn
    await b.flush(); // sent now instead
    await turns(2);
    b.send("b");
    expect(await server.recv()).toEqual(["a"]);
    expect(await server.recv()).toEqual(["b"]);
    expect(b.batchCount).toBe(2);
  });

  it("every concurrent flush() waits until what was buffered is sent", async () => {
    const { client } = await pair();
    const sends = heldSends(client);
    const b = new BatchedSend(client, { intervalMs: 60_000 });
    b.send("a");
    const first = b.flush();
    b.send("b");
    const settled: string[] = [];
    const second = b.flush().then(() => settled.push("second"));
    const third = b.flush().then(() => settled.push("third"));
    sends[0].done();
    await turns(2);
    expect(sends.map((s) => s.msg)).toEqual([["a"], ["b"]]);
    // ["b"] is not sent yet: neither flush may say it is.
    expect(settled).toEqual([]);
    sends[1].done();
    await Promise.all([first, second, third]);
    expect(settled.sort()).toEqual(["second", "third"]);
  });

  it("close() closes the comm; close(false) leaves it open for its owner", async () => {
    const { client, server } = await pair();
    const kept = new BatchedSend(client);
    kept.send("x");
    await kept.close(false);
    expect(kept.isClosed).toBe(true);
    expect(client.isClosed).toBe(false);
    expect(await server.recv()).toEqual(["x"]);
    const closing = new BatchedSend(client);
    await closing.close();
    expect(client.isClosed).toBe(true);
  });
});

// Over TCP, whose comms take a peer's limit (limitSendsTo).
describe("BatchedSend over a limit", () => {
  it("a batch too large only as a whole goes in parts, in order, and the stream goes on (no onMessageError)", async () => {
    const { client, server } = await pair("tcp://127.0.0.1:0");
    const errors: unknown[] = [];
    const b = new BatchedSend(client, { intervalMs: 0, onError: (e) => errors.push(e) });
    client.limitSendsTo?.(10_000, "the test's peer");
    // Ten messages of 3 kB: 30 kB in one batch, over the 10 kB the peer takes.
    const msgs = Array.from({ length: 10 }, (_, i) => ({ op: "m", i, pad: "x".repeat(3000) }));
    b.send(...msgs);
    const got: unknown[] = [];
    while (got.length < msgs.length) got.push(...((await server.recv()) as unknown[]));
    expect(got).toEqual(msgs);
    expect(errors).toEqual([]);
    expect(b.isClosed).toBe(false);
  });

  it("flush() waits for a batch going in halves: every message arrives, in order", async () => {
    const { client, server } = await pair("tcp://127.0.0.1:0");
    client.limitSendsTo?.(10_000, "the test's peer");
    const b = new BatchedSend(client, { intervalMs: 0 });
    const msgs = Array.from({ length: 10 }, (_, i) => ({ op: "m", i, pad: "x".repeat(3000) }));
    b.send(...msgs);
    // flush() resolves once every half was handed to the comm: stopping then loses none.
    await b.flush();
    b.abort();
    await client.close();
    const got: unknown[] = [];
    for await (const batch of server) got.push(...(batch as unknown[]));
    expect(got).toEqual(msgs);
  });

  it("a single message too large, without onMessageError, closes the stream", async () => {
    const { client } = await pair("tcp://127.0.0.1:0");
    client.limitSendsTo?.(10_000, "the test's peer");
    const errors: unknown[] = [];
    const b = new BatchedSend(client, { intervalMs: 0, onError: (e) => errors.push(e) });
    b.send({ op: "small" }, { op: "big", pad: "x".repeat(20_000) });
    await client.closed;
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).name).toBe("MessageTooLargeError");
    expect(b.isClosed).toBe(true);
  });
});
