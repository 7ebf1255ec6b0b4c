import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { ClientClosedError, CoordinationTimeoutError } from "./errors.ts";
import { Sub } from "./pubsub.ts";
import { closeTestClusters, eventually, testCluster } from "./testCluster.ts";
import { collectsMessages, firesAndForgets, inc, publishes } from "./testTasks.ts";

afterEach(closeTestClusters);

/** Wait until `name` has `n` subscribed clients. */
async function subscribed(
  client: { pub(name: string): { subscribers(): Promise<number> } },
  name: string,
  n: number,
): Promise<void> {
  const pub = client.pub(name);
  const t0 = Date.now();
  while ((await pub.subscribers()) !== n) {
    if (Date.now() - t0 > 10_000) throw new Error(`${name}: never ${n} subscribers`);
    await sleep(10);
  }
}

describe("publish–subscribe: pub, sub", () => {
  for (const protocol of ["inproc", "tcp"] as const) {
    it(`sends each message to every subscriber, copied, in the order put (${protocol})`, async () => {
      const { cluster, client } = await testCluster({ workers: 1, protocol });
      const other = await cluster.client();
      const a = await other.sub<{ n: number; at?: Date; tags?: Set<string> }>("news");
      const b = await other.sub<{ n: number }>("news");
      const mine = await client.sub("news");
      const pub = client.pub<{ n: number; at?: Date; tags?: Set<string> }>("news");
      // Two clients, whatever their Subs.
      expect(await pub.subscribers()).toBe(2);
      const first = { n: 0, at: new Date(0), tags: new Set(["x"]) };
      pub.put(first);
      first.n = 99; // put copied it
      for (let n = 1; n < 100; n++) pub.put({ n });
      const fromA: number[] = [];
      for (let i = 0; i < 100; i++) fromA.push((await a.get({ timeoutMs: 5_000 })).n);
      expect(fromA).toEqual([...Array(100).keys()]);
      const b0 = await b.get({ timeoutMs: 5_000 });
      expect(b0).toEqual({ n: 0, at: new Date(0), tags: new Set(["x"]) });
      // Each Sub has a copy of its own.
      b0.n = -1;
      expect(await mine.get({ timeoutMs: 5_000 })).toEqual({
        n: 0,
        at: new Date(0),
        tags: new Set(["x"]),
      });
      await eventually(() => b.buffered === 99 && mine.buffered === 99, 5_000, "all came");

      // One Sub of a client closed, its other still gets them.
      await a.close();
      expect(a.closed).toBe(true);
      await expect(a.get()).rejects.toThrow(/the Sub is closed/);
      pub.put({ n: 100 });
      await eventually(() => b.buffered === 100, 5_000, "b got 100");
      expect(await pub.subscribers()).toBe(2);
      // The last closed: the client is no longer subscribed.
      await b.close();
      expect(await pub.subscribers()).toBe(1);
      pub.put({ n: 101 });
      await eventually(() => mine.buffered === 101, 5_000, "mine got 101");
      expect(b.buffered).toBe(0);
    });

    it(`takes any name a Pub takes, __proto__ and constructor too (${protocol})`, async () => {
      const { client } = await testCluster({ workers: 1, protocol });
      for (const name of ["__proto__", "constructor", "a\u0000b"]) {
        // Refused before as "name must be a non-empty string", while a Pub of it was taken.
        const sub = await client.sub<number>(name);
        const pub = client.pub<number>(name);
        expect(await pub.subscribers()).toBe(1);
        pub.put(7);
        expect(await sub.get({ timeoutMs: 5_000 })).toBe(7);
        await sub.close();
        expect(await pub.subscribers()).toBe(0);
      }
    });
  }

  it("sends nothing put before the subscription, nor after it ends", async () => {
    const { client } = await testCluster({ workers: 1 });
    const pub = client.pub("late");
    pub.put("nobody hears this");
    expect(await pub.subscribers()).toBe(0);
    const sub = await client.sub<string>("late");
    pub.put("heard");
    expect(await sub.get({ timeoutMs: 5_000 })).toBe("heard");
    await expect(sub.get({ timeoutMs: 30 })).rejects.toThrow(CoordinationTimeoutError);
    await expect(sub.get({ timeoutMs: 0 })).rejects.toThrow(/Sub.get "late": timed out/);
    // A wait that timed out took nothing from the next message.
    pub.put("next");
    await eventually(() => sub.buffered === 1, 5_000, "next came");
    expect(await sub.get({ timeoutMs: 0 })).toBe("next");
  });

  it("maxBuffered: a slow subscriber keeps the newest messages, and counts those it dropped", async () => {
    const { client } = await testCluster({ workers: 1 });
    await expect(client.sub("bounded", { maxBuffered: 0 })).rejects.toThrow(
      "sub: maxBuffered must be an integer ≥ 1, got 0",
    );
    const few = await client.sub<number>("bounded", { maxBuffered: 3 });
    const many = await client.sub<number>("bounded", { maxBuffered: 2 });
    const all = await client.sub<number>("bounded");
    const pub = client.pub<number>("bounded");
    for (let n = 0; n < 3000; n++) pub.put(n);
    await eventually(() => all.buffered === 3000, 10_000, "every message came");
    expect([few.buffered, few.dropped]).toEqual([3, 2997]);
    expect([many.buffered, many.dropped]).toEqual([2, 2998]);
    expect(all.dropped).toBe(0);
    expect([await few.get(), await few.get(), await few.get()]).toEqual([2997, 2998, 2999]);
    expect([await many.get(), await many.get()]).toEqual([2998, 2999]);
    pub.put(3000);
    expect(await few.get({ timeoutMs: 5_000 })).toBe(3000);
  });

  it("ends a for-await loop when the Sub closes; a break closes it", async () => {
    const { client } = await testCluster({ workers: 1 });
    const sub = await client.sub<number>("loop");
    const pub = client.pub<number>("loop");
    const seen: number[] = [];
    const loop = (async () => {
      for await (const n of sub) seen.push(n);
      return "ended";
    })();
    pub.put(1);
    pub.put(2);
    await eventually(() => seen.length === 2, 5_000, "two seen");
    await sub.close();
    expect(await loop).toBe("ended");
    expect(seen).toEqual([1, 2]);

    const again = await client.sub<number>("loop");
    for (let n = 0; n < 5; n++) pub.put(n);
    for await (const n of again) if (n === 2) break;
    expect(again.closed).toBe(true);
    expect(await pub.subscribers()).toBe(0);
  });

  for (const executor of ["inline", "threads"] as const) {
    it(`tasks publish and subscribe through their client (${executor})`, async () => {
      const { client } = await testCluster({ workers: 2, executor });
      const sub = await client.sub<{ task: number }>("from-task");
      expect(await client.submit(publishes, "from-task", 3)).toBe(3);
      const got = [];
      for (let i = 0; i < 3; i++) got.push(await sub.get({ timeoutMs: 5_000 }));
      expect(got).toEqual([{ task: 0 }, { task: 1 }, { task: 2 }]);

      const collected = client.submit(collectsMessages, "to-task", 2);
      // The task's client subscribed, next to this one.
      await subscribed(client, "to-task", 1);
      const pub = client.pub("to-task");
      pub.put({ a: 1 });
      pub.put([2]);
      expect(await collected).toEqual([{ a: 1 }, [2]]);
      await subscribed(client, "to-task", 0);
      await sub.close();
    });
  }

  it("a task on a pool thread: what its client queued leaves with its result", async () => {
    // A pool thread's event loop stops between tasks: what a task's client
    // queued (a put, a fire-and-forget submission) must leave before it does.
    const { client } = await testCluster({ workers: 1, executor: "threads" });
    const sub = await client.sub<{ task: number }>("fired");
    expect(await client.submit(firesAndForgets, "fired")).toBe("fired");
    expect(await sub.get({ timeoutMs: 5_000 })).toEqual({ task: 0 });
  });

  it("refuses bad names, waits and messages", async () => {
    const { client } = await testCluster({ workers: 1 });
    expect(() => client.pub("")).toThrow(/pub: the name must be a non-empty string/);
    await expect(client.sub(7 as unknown as string)).rejects.toThrow(
      /sub: the name must be a non-empty string/,
    );
    const pub = client.pub("bad");
    expect(() => pub.put(() => 1)).toThrow(/Pub.put: the value cannot be sent/);
    const future = client.submit(inc, 1);
    expect(() => pub.put({ future })).toThrow(/Pub.put: a future cannot be a message/);
    await future;
    const sub = await client.sub("bad");
    await expect(sub.get({ timeoutMs: -1 })).rejects.toThrow(/Sub.get: timeoutMs must be/);
    // A malformed put reaches the scheduler as a rejected message, not a crash.
    const before = (await client.counters()).rejectedMessages;
    (client as unknown as { conn: { send(m: unknown): void } }).conn.send({ op: "pubsub-put" });
    for (let i = 0; i < 100; i++) {
      if ((await client.counters()).rejectedMessages > before) break;
      await sleep(10);
    }
    expect((await client.counters()).rejectedMessages).toBe(before + 1);
  });

  it("a Sub dropped without a close is collected and unsubscribed, as Dask's WeakSet of subscribers lets it go; one a get waits on is not", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const { cluster, client } = await testCluster({ workers: 1 });
    const other = await cluster.client();
    // Made and dropped, as a task that never closes its Sub: before, it stayed
    // subscribed and buffered every message for the life of its client.
    await (async () => {
      const dropped = await other.sub("dropped");
      expect(await dropped.get({ timeoutMs: 0 }).catch(() => "none")).toBe("none");
    })();
    await subscribed(client, "dropped", 1);
    // Only its pending get reaches this one.
    const waiting = (async () => await (await other.sub<number>("waited")).get())();
    await subscribed(client, "waited", 1);
    for (let i = 0; i < 5; i++) {
      gc();
      await sleep(20);
    }
    await subscribed(client, "dropped", 0);
    expect(await client.pub("waited").subscribers()).toBe(1);
    client.pub<number>("waited").put(7);
    expect(await waiting).toBe(7);
    for (let i = 0; i < 5; i++) {
      gc();
      await sleep(20);
    }
    await subscribed(client, "waited", 0);
  });

  it("a client that closes is no longer subscribed; its waiting gets reject, after what came", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const other = await cluster.client();
    const sub = await other.sub<number>("bye");
    const pub = client.pub<number>("bye");
    pub.put(1);
    await eventually(() => sub.buffered === 1, 5_000, "1 came");
    await other.close();
    expect(await sub.get()).toBe(1);
    await expect(sub.get()).rejects.toThrow(ClientClosedError);
    await subscribed(client, "bye", 0);
    expect(() => other.pub("bye").put(2)).toThrow(ClientClosedError);
    await expect(other.sub("bye")).rejects.toThrow(ClientClosedError);

    // A waiting get is rejected when the client closes.
    const third = await cluster.client();
    const waiting = (await third.sub("bye")).get();
    await third.close();
    await expect(waiting).rejects.toThrow(ClientClosedError);
  });
});

describe("Sub", () => {
  it("once failed keeps its first failure, and takes no message more", async () => {
    const sub = new Sub<string>("t", () => Promise.resolve());
    const first = new ClientClosedError("closed");
    sub.fail(first);
    sub.fail(new Error("second"));
    sub.deliver("late");
    expect(sub.buffered).toBe(0);
    await expect(sub.get()).rejects.toBe(first);
  });

  // Read through a head index and cut only once emptied, the buffer kept every
  // message taken while the reader stayed one behind: 160,000 messages of 1 kB
  // held 75 MB, with one buffered.
  it("lets go of each message taken, also while others stay buffered", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const sub = new Sub<{ i: number }>("t", () => Promise.resolve());
    sub.deliver({ i: -1 });
    const taken: WeakRef<object>[] = [];
    for (let i = 0; i < 100; i++) {
      sub.deliver({ i });
      taken.push(new WeakRef(await sub.get()));
    }
    expect(sub.buffered).toBe(1);
    const held = () => taken.map((r) => r.deref()).filter((v) => v !== undefined);
    for (let round = 0; round < 10 && held().length > 0; round++) {
      await sleep(10);
      gc();
    }
    expect(held()).toEqual([]);
    expect(await sub.get()).toEqual({ i: 99 });
  });
});
