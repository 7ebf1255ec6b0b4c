/**
 * A client's connection to a stand-in scheduler: the `register-client`
 * handshake, requests and their replies, and how the connection ends.
 */

import { afterEach, describe, expect, it } from "vitest";
import type { Comm } from "../comm/comm.ts";
import { listen } from "../comm/connect.ts";
import { MessageTooLargeError } from "../comm/errors.ts";
import { wireVersion } from "../protocol/version.ts";
import { ClientClosedError, SchedulerReplyError } from "./errors.ts";
import { SchedulerConnection, type SchedulerConnectionOptions } from "./schedulerConnection.ts";

const toClose: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  for (const x of toClose.splice(0).reverse()) await x.close();
});

const OPTIONS = { timeoutMs: 5_000, batchedSendIntervalMs: 2 };

/**
 * A stand-in scheduler listening at `address`: it answers `register-client`
 * with `reply` (none if null) and hands its end of the connection to the test.
 */
async function fakeScheduler(
  reply: Record<string, unknown> | null = {
    op: "register-client-reply",
    status: "OK",
    ...wireVersion(),
  },
  address = "inproc://fake-scheduler",
) {
  const hellos: unknown[] = [];
  let accepted!: (comm: Comm) => void;
  const comm = new Promise<Comm>((resolve) => {
    accepted = resolve;
  });
  const listener = await listen(address, (c) => {
    void (async () => {
      hellos.push(await c.recv());
      if (reply !== null) await c.send(reply);
      accepted(c);
    })();
  });
  toClose.push(listener);
  return { address: listener.address, hellos, comm };
}

/** The next message the stand-in scheduler receives (the stream sends batches). */
async function nextMessages(comm: Comm): Promise<Record<string, unknown>[]> {
  const frame = await comm.recv();
  return (Array.isArray(frame) ? frame : [frame]) as Record<string, unknown>[];
}

/** Open a connection as client `c1`, closed after the test. */
async function open(address: string, o: Partial<SchedulerConnectionOptions> = {}) {
  const conn = await SchedulerConnection.open(address, "c1", { ...OPTIONS, ...o });
  toClose.push(conn);
  return conn;
}

describe("SchedulerConnection", () => {
  it("registers as the client, saying its wire version and the largest message it takes", async () => {
    const s = await fakeScheduler(
      { op: "register-client-reply", status: "OK", ...wireVersion() },
      "tcp://127.0.0.1:0",
    );
    await open(s.address, { maxMessageBytes: 4096 });
    expect(s.hellos).toEqual([
      { op: "register-client", clientId: "c1", maxMessageBytes: 4096, ...wireVersion() },
    ]);
  });

  it("refuses a scheduler refusing it, with the scheduler's reason or else its whole answer", async () => {
    const withReason = await fakeScheduler({
      op: "register-client-reply",
      status: "error",
      message: "no room",
    });
    await expect(open(withReason.address)).rejects.toThrow(
      new Error(`the scheduler at ${withReason.address} refused the client: no room`),
    );
    const without = await fakeScheduler({ op: "register-client-reply", status: "nope" });
    await expect(open(without.address)).rejects.toThrow(
      new Error(
        `the scheduler at ${without.address} refused the client: {"op":"register-client-reply","status":"nope"}`,
      ),
    );
  });

  it("gives up on a scheduler that does not answer register-client in time, saying so", async () => {
    const s = await fakeScheduler(null);
    await expect(open(s.address, { timeoutMs: 50 })).rejects.toThrow(
      new Error(
        `registering with ${s.address} timed out after 50 ms: it accepted the connection but did not answer register-client (a scheduler frozen or stalled: stopped, a paused VM, a long GC; or not a weft scheduler)`,
      ),
    );
  });

  it("leaves no timer holding the process once registered and closed", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const s = await fakeScheduler();
    const before = timers();
    const conn = await open(s.address, { timeoutMs: 60_000 });
    await conn.close();
    expect(timers()).toBe(before);
  });

  it("settles each request with its reply: the result, or a SchedulerReplyError naming the op", async () => {
    const s = await fakeScheduler();
    const conn = await open(s.address);
    const answered = conn.request("who-has", { keys: ["x"] });
    const refused = conn.request("nbytes", { keys: ["x"] });
    const server = await s.comm;
    const asked: Record<string, unknown>[] = [];
    while (asked.length < 2) asked.push(...(await nextMessages(server)));
    expect(asked.map((m) => m.op)).toEqual(["who-has", "nbytes"]);
    expect(asked[0].keys).toEqual(["x"]);
    // Answered in the other order.
    await server.send([
      { op: "reply", requestId: asked[1].requestId, error: "no such key" },
      { op: "reply", requestId: asked[0].requestId, result: { x: ["tcp://w:1"] } },
    ]);
    await expect(answered).resolves.toEqual({ x: ["tcp://w:1"] });
    const err = await refused.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchedulerReplyError);
    expect(err).toMatchObject({ op: "nbytes", reason: "no such key" });
    // A reply to no request waiting (answered already) is ignored: the connection goes on.
    await server.send([{ op: "reply", requestId: asked[0].requestId, result: "again" }]);
    const next = conn.request("counters");
    const [third] = await nextMessages(server);
    await server.send([{ op: "reply", requestId: third.requestId, result: 3 }]);
    await expect(next).resolves.toBe(3);
    expect(conn.isClosed).toBe(false);
  });

  it("passes the scheduler's other messages on, batched or sent alone", async () => {
    const s = await fakeScheduler();
    const conn = await open(s.address);
    const got: unknown[] = [];
    const both = new Promise<void>((resolve) => {
      conn.onMessage = (msg) => {
        got.push(msg);
        if (got.length === 3) resolve();
      };
    });
    const server = await s.comm;
    await server.send([{ op: "stream-start" }, { op: "event", topic: "t", event: 1 }]);
    await server.send({ op: "pubsub-msg", name: "n", msg: 2 });
    await both;
    expect(got).toEqual([
      { op: "stream-start" },
      { op: "event", topic: "t", event: 1 },
      { op: "pubsub-msg", name: "n", msg: 2 },
    ]);
  });

  it("fails the requests waiting when the scheduler ends the connection, and reports it as an error", async () => {
    const s = await fakeScheduler();
    const conn = await open(s.address);
    const closed = new Promise<Error | null>((resolve) => {
      conn.onClose = (err) => {
        resolve(err);
        return undefined;
      };
    });
    const waiting = conn.request("counters");
    const server = await s.comm;
    await nextMessages(server);
    await server.close();
    await expect(waiting).rejects.toThrow(
      new ClientClosedError(
        "the connection to the scheduler ended: the scheduler closed the connection",
      ),
    );
    expect(await closed).toEqual(new Error("the scheduler closed the connection"));
    expect(conn.isClosed).toBe(true);
    await expect(conn.request("counters")).rejects.toThrow(ClientClosedError);
  });

  it("closed by the client: reports no error, and refuses to send from the moment close is called", async () => {
    const s = await fakeScheduler();
    const conn = await open(s.address);
    const ended = new Promise<Error | null>((resolve) => {
      conn.onClose = (err) => {
        resolve(err);
        return undefined;
      };
    });
    conn.send({ op: "heartbeat-client" });
    const closing = conn.close();
    // What is queued is still sent, but nothing more is taken.
    expect(conn.isClosed).toBe(true);
    expect(() => conn.send({ op: "heartbeat-client" })).toThrow(
      new ClientClosedError("the connection to the scheduler is closed"),
    );
    await expect(conn.request("counters")).rejects.toThrow(
      new ClientClosedError("the connection to the scheduler is closed"),
    );
    await closing;
    expect(await nextMessages(await s.comm)).toEqual([{ op: "heartbeat-client" }]);
    expect(await ended).toBeNull();
  });

  it("rejects a request too large for the scheduler with why; another message too large goes to onSendFailed", async () => {
    const s = await fakeScheduler(
      { op: "register-client-reply", status: "OK", maxMessageBytes: 10_000, ...wireVersion() },
      "tcp://127.0.0.1:0",
    );
    const conn = await open(s.address);
    const failed: [unknown, Error][] = [];
    conn.onSendFailed = (msg, err) => failed.push([msg, err]);
    const big = "x".repeat(20_000);
    await expect(conn.request("who-has", { keys: [big] })).rejects.toThrow(MessageTooLargeError);
    expect(failed).toEqual([]);
    conn.send({ op: "update-graph", big });
    await conn.flush();
    expect(failed.map(([msg, err]) => [(msg as { op: string }).op, err.name])).toEqual([
      ["update-graph", "MessageTooLargeError"],
    ]);
    // The connection goes on.
    const answered = conn.request("counters");
    const server = await s.comm;
    const [asked] = await nextMessages(server);
    await server.send([{ op: "reply", requestId: asked.requestId, result: 7 }]);
    await expect(answered).resolves.toBe(7);
  });
});
