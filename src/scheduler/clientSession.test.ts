import { afterEach, describe, expect, it, vi } from "vitest";
import { wireVersion } from "../protocol/version.ts";
import type { Scheduler } from "./scheduler.ts";
import { INC_X_GRAPH, rawPeer, startTestScheduler } from "./testPeer.ts";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

function start(): Promise<Scheduler> {
  return startTestScheduler("inproc://client-session", (s) => open.push(s));
}

/** A raw client connection, registered. */
async function rawClient(s: Scheduler, clientId: string) {
  const c = await rawPeer(s.address, { op: "register-client", clientId, ...wireVersion() }, (x) =>
    open.push(x),
  );
  expect(c.reply).toMatchObject({ status: "OK" });
  return c;
}

describe("a client's session", () => {
  it("answers a request after the messages before it in the same frame, so that it sees their effects", async () => {
    const s = await start();
    const c = await rawClient(s, "c1");
    await c.comm.send([INC_X_GRAPH, { op: "who-has", requestId: 1 }]);
    const reply = await c.waitFor((m) => m.requestId === 1);
    expect(reply.result).toEqual({ x: [] });
  });

  it("counts and drops a pubsub-put without a msg, sending nothing to the subscribers", async () => {
    const s = await start();
    const sub = await rawClient(s, "sub");
    await sub.comm.send([{ op: "pubsub-subscribe", requestId: 1, name: "t" }]);
    await sub.waitFor((m) => m.requestId === 1);
    const pub = await rawClient(s, "pub");
    await pub.comm.send([
      { op: "pubsub-put", name: "t" },
      { op: "pubsub-put", name: "t", msg: "second" },
    ]);
    const got = await sub.waitFor((m) => m.op === "pubsub-msg");
    expect(got.msg).toBe("second");
    expect(sub.received.filter((m) => m.op === "pubsub-msg")).toHaveLength(1);
    expect(s.countersSnapshot.rejectedMessages).toBe(1);
  });

  it("unsubscribes a client that left from its topics: one made by its subscription alone goes", async () => {
    const s = await start();
    const left = new Promise<void>((resolve) => {
      void s.addPlugin({ name: "watch", removeClient: (_s, c) => c === "sub" && resolve() });
    });
    const sub = await rawClient(s, "sub");
    await sub.comm.send([{ op: "subscribe-topic", requestId: 1, topic: "t" }]);
    await sub.waitFor((m) => m.requestId === 1);
    await sub.comm.close();
    await left;
    const other = await rawClient(s, "other");
    await other.comm.send([{ op: "get-events", requestId: 2 }]);
    expect((await other.waitFor((m) => m.requestId === 2)).result).toEqual({});
  });

  it("records the worker a task's client serves, refusing one that names none, and forgets it as the client leaves", async () => {
    const s = await start();
    const bad = await rawPeer(
      s.address,
      { op: "register-client", clientId: "w0", worker: 5, ...wireVersion() },
      (x) => open.push(x),
    );
    expect(bad.reply).toMatchObject({
      status: "error",
      message: "register-client: worker must be a non-empty worker address",
    });
    const c = await rawPeer(
      s.address,
      { op: "register-client", clientId: "w1", worker: "inproc://w", ...wireVersion() },
      (x) => open.push(x),
    );
    expect(c.reply).toMatchObject({ status: "OK" });
    expect(s.workerClients.count("inproc://w")).toBe(1);
    await c.comm.close();
    await vi.waitFor(() => expect(s.workerClients.count("inproc://w")).toBe(0));
  });
});
