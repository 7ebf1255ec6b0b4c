import { afterEach, describe, expect, it } from "vitest";
import { ClonedValue } from "../comm/clonedValue.ts";
import { replyTo } from "../scheduler/clientRequests.ts";
import {
  ClientClosedError,
  CoordinationTimeoutError,
  QueueItemsLostError,
  SchedulerReplyError,
} from "./errors.ts";
import { Future } from "./future.ts";
import { beforeRequest, closeTestClusters, eventually, testCluster } from "./testCluster.ts";
import { failsHoldingLock, lockedIncrement } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("Lock and Semaphore", () => {
  it("one Lock holds it at a time; a release, or its client leaving, lets the next in", async () => {
    const { cluster, client: a } = await testCluster({ workers: 1 });
    const b = await cluster.client();
    const c = await cluster.client();
    const la = a.lock("L");
    const lb = b.lock("L");
    expect(await la.acquire()).toBe(true);
    expect(await la.locked()).toBe(true);
    expect(await lb.acquire({ timeoutMs: 30 })).toBe(false);
    expect(await lb.acquire({ blocking: false })).toBe(false);
    await expect(la.acquire()).rejects.toThrow(/holds "L" already \(locks are not reentrant\)/);
    const waiting = lb.acquire();
    // A second acquire while the first waits is refused too, not queued behind it: whether
    // it waited or was refused would hang on whether the first's answer had come.
    await expect(lb.acquire()).rejects.toThrow(
      /^Lock\.acquire: this Lock is acquiring "L" already \(one holder a Lock/,
    );
    await la.release();
    expect(await waiting).toBe(true);
    await expect(la.release()).rejects.toThrow('Lock.release: this Lock does not hold "L"');
    // b leaves holding it: c's waiting acquire gets it.
    const lc = c.lock("L");
    const cWaits = lc.acquire();
    await b.close();
    expect(await cWaits).toBe(true);
    await lc.release();
    expect(await lc.locked()).toBe(false);
    // A lock and a semaphore of the same name are apart.
    expect(await a.semaphore("L").acquire({ timeoutMs: 0 })).toBe(true);
    // One lease by default: a second is not to be had.
    expect(await a.semaphore("L").acquire({ timeoutMs: 0 })).toBe(false);
    // Whatever the semaphore's name: "lock:L" once named the lock L's own semaphore.
    const taken = a.lock("L");
    expect(await taken.acquire({ blocking: false })).toBe(true);
    expect(await a.semaphore("lock:L").getValue()).toBe(0);
    expect(await a.semaphore("lock:L", { maxLeases: 2 }).acquire({ timeoutMs: 0 })).toBe(true);
    expect(await a.lock("M").acquire({ blocking: false })).toBe(true);
    expect(await a.semaphore("lock:M").acquire({ timeoutMs: 0 })).toBe(true);
    await taken.release();
  });

  it("a semaphore lets maxLeases in at once, first come first served", async () => {
    const { client } = await testCluster({ workers: 1 });
    const s = client.semaphore("S", { maxLeases: 2 });
    expect(await s.acquire()).toBe(true);
    expect(await s.acquire()).toBe(true);
    expect(await s.getValue()).toBe(2);
    const order: string[] = [];
    const first = s.acquire().then(() => order.push("first"));
    const second = s.acquire().then(() => order.push("second"));
    await s.release();
    await first;
    await s.release();
    await second;
    expect(order).toEqual(["first", "second"]);
    expect(await s.getValue()).toBe(2);
    await expect(client.semaphore("S", { maxLeases: 3 }).acquire()).rejects.toThrow(
      /^Semaphore\.acquire: semaphore "S" has maxLeases 2, not 3$/,
    );
    await expect(client.semaphore("T").release()).rejects.toThrow(/holds no lease here/);
    expect(() => client.semaphore("S", { maxLeases: 0 })).toThrow(
      /maxLeases must be an integer ≥ 1/,
    );
    await expect(s.acquire({ timeoutMs: -1 })).rejects.toThrow(/timeoutMs must be a number/);
    expect(() => client.lock("")).toThrow(/the name must be a non-empty string/);
  });

  it("tasks take turns under a lock (their clients, on pool threads)", async () => {
    const { client } = await testCluster({ executor: "threads", threadsPerWorker: 2 });
    await client.variable<number>("turns").set(0);
    const done = await client.gather(
      Array.from({ length: 12 }, (_, i) => client.submit(lockedIncrement, "turns", i)),
    );
    expect(done).toHaveLength(12);
    expect(await client.variable<number>("turns").get()).toBe(12);
  });
});

describe("leases do not time out", () => {
  it("a task that fails holding a lock keeps it as long as its client, the worker's, lives", async () => {
    const { client } = await testCluster({ workers: 1 });
    await expect(client.submit(failsHoldingLock, "held")).rejects.toThrow("failed holding held");
    // Dask's lease would expire unrefreshed after its lease-timeout (30 s); here it stays.
    await new Promise((r) => setTimeout(r, 300));
    expect(await client.lock("held").locked()).toBe(true);
    expect(await client.lock("held").acquire({ timeoutMs: 100 })).toBe(false);
    // A restart replaces the worker: its client leaves, and the lease goes with it.
    await client.restart();
    expect(await client.lock("held").acquire({ timeoutMs: 5_000 })).toBe(true);
  });
});

describe("MultiLock", () => {
  it("takes all its locks at once, or some of them, and lets the next in on release", async () => {
    const { cluster, client: a } = await testCluster({ workers: 1 });
    const b = await cluster.client();
    const ab = a.multiLock(["x", "y"]);
    expect(await ab.acquire()).toBe(true);
    expect(ab.locked()).toBe(true);
    await expect(ab.acquire()).rejects.toThrow(/holds its locks already \(not reentrant\)/);
    // y and z: waits for y, taking no z meanwhile; z alone is free to the next only once its turn passes.
    const yz = b.multiLock(["y", "z"]);
    const yzGot = yz.acquire();
    await expect(yz.acquire()).rejects.toThrow(/this MultiLock is acquiring its locks already/);
    expect(await a.multiLock(["z"]).acquire({ blocking: false })).toBe(false);
    await ab.release();
    expect(await yzGot).toBe(true);
    expect(ab.locked()).toBe(false);
    await expect(ab.release()).rejects.toThrow(
      "MultiLock.release: this MultiLock does not hold its locks",
    );
    // One of x, y: x is free.
    const one = a.multiLock(["y", "x"]);
    expect(await one.acquire({ numLocks: 1, timeoutMs: 1_000 })).toBe(true);
    expect(await a.multiLock(["x"]).acquire({ timeoutMs: 20 })).toBe(false);
    // b leaves holding y and z: they are free again.
    await b.close();
    expect(await a.multiLock(["y", "z"]).acquire({ timeoutMs: 5_000 })).toBe(true);
    // A lock and a multi-lock of the same name are apart.
    expect(await a.lock("x").acquire({ timeoutMs: 0 })).toBe(true);
  });

  it("refuses bad names and counts", async () => {
    const { client } = await testCluster({ workers: 1 });
    expect(() => client.multiLock([])).toThrow(/names must be a non-empty array/);
    expect(() => client.multiLock(["x", ""])).toThrow(/the name must be a non-empty string/);
    const m = client.multiLock(["x", "y", "x"]);
    expect(m.names).toEqual(["x", "y"]);
    await expect(m.acquire({ numLocks: 3 })).rejects.toThrow(
      /numLocks must be an integer from 1 to 2, got 3/,
    );
    await expect(m.acquire({ numLocks: 0 })).rejects.toThrow(/numLocks must be an integer/);
    await expect(m.acquire({ timeoutMs: Number.NaN })).rejects.toThrow(/timeoutMs must be/);
    await expect(
      m.acquire({ blocking: false, timeoutMs: Number.POSITIVE_INFINITY }),
    ).rejects.toThrow(/blocking: false does not wait, so timeoutMs \(Infinity\) cannot be given/);
    expect(m.locked()).toBe(false);
  });
});

describe("Event", () => {
  it("wait resolves once it is set, or false after its timeout", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const other = await cluster.client();
    const e = client.event("E");
    expect(await e.isSet()).toBe(false);
    expect(await e.wait({ timeoutMs: 20 })).toBe(false);
    expect(await e.wait({ timeoutMs: 0 })).toBe(false);
    const waiting = e.wait();
    // Infinity waits as long as it takes, as wait() and the futures' timeouts take it.
    const forever = e.wait({ timeoutMs: Number.POSITIVE_INFINITY });
    await other.event("E").set();
    expect(await waiting).toBe(true);
    expect(await forever).toBe(true);
    expect(await e.isSet()).toBe(true);
    expect(await e.wait({ timeoutMs: 0 })).toBe(true);
    await e.clear();
    expect(await e.isSet()).toBe(false);
  });
});

describe("Variable", () => {
  for (const protocol of ["inproc", "tcp"] as const) {
    it(`holds a copy of a value, which get waits for (${protocol})`, async () => {
      const { cluster, client } = await testCluster({ workers: 1, protocol });
      const other = await cluster.client();
      const v = client.variable<{ xs: number[]; when: Date }>("V");
      const err = await v.get({ timeoutMs: 20 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CoordinationTimeoutError);
      expect((err as Error).message).toBe('Variable.get "V": timed out after 20 ms');
      const waiting = other.variable("V").get();
      const value = { xs: [1, 2], when: new Date(0) };
      await v.set(value);
      value.xs.push(3);
      expect(await waiting).toEqual({ xs: [1, 2], when: new Date(0) });
      const got = await v.get();
      got.xs.push(4);
      expect((await v.get()).xs).toEqual([1, 2]);
      await v.delete();
      await expect(v.get({ timeoutMs: 0 })).rejects.toThrow(CoordinationTimeoutError);
      const f = client.submit("inc", 1) as Future<number>;
      await expect(v.set(f as never)).rejects.toThrow(
        /Variable.set: a future alone would be got as its result .*give \[future\] or \{ future \}/,
      );
      await expect(v.set((() => 1) as never)).rejects.toThrow(/the value cannot be sent/);
      await f;
    });

    it(`holds the futures in its value until it is set again or deleted (${protocol})`, async () => {
      const { cluster, client } = await testCluster({ workers: 1, protocol });
      const other = await cluster.client();
      const tasks = cluster.scheduler.state.tasks;
      const v = client.variable<{ f: Future<number>; n: number }>("V");
      const f = client.submit("inc", 1) as Future<number>;
      const waiting = other.variable<{ f: Future<number>; n: number }>("V").get();
      await v.set({ f, n: 2 });
      // Its client lets the future go: the variable holds the key for the others.
      f.release();
      const got = await waiting;
      expect(got.n).toBe(2);
      expect(got.f).toBeInstanceOf(Future);
      expect(got.f.key).toBe(f.key);
      expect(await got.f).toBe(2);
      got.f.release();
      await new Promise((r) => setTimeout(r, 30));
      expect(tasks.get(f.key)?.state).toBe("memory");
      // Hidden from the datasets listed.
      expect(await client.listDatasets()).toEqual([]);
      // Set again: the old value's futures are let go, the new one's held.
      const g = client.submit("inc", 10) as Future<number>;
      await v.set({ f: g, n: 3 });
      g.release();
      await eventually(() => !tasks.has(f.key), 5000, "f let go");
      expect(await (await other.variable<{ f: Future<number> }>("V").get()).f).toBe(11);
      // Deleted: nothing holds g any more (the future got above was collected by no one: release it).
      await v.delete();
      await expect(v.get({ timeoutMs: 0 })).rejects.toThrow(CoordinationTimeoutError);
      await expect(v.set({ f } as never)).rejects.toThrow(/the future of .* was released/);
      await other.close();
      await eventually(() => !tasks.has(g.key), 5000, "g let go");
    });
  }
});

describe("Queue", () => {
  it("first in, first out; get waits for a value, put for room", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const other = await cluster.client();
    const q = client.queue<number>("Q", { maxsize: 2 });
    const getting = other.queue<number>("Q", { maxsize: 2 }).get();
    await q.put(1);
    expect(await getting).toBe(1);
    await q.put(2);
    await q.put(3);
    expect(await q.qsize()).toBe(2);
    await expect(q.put(4, { timeoutMs: 10 })).rejects.toThrow(
      'Queue.put "Q": no room within 10 ms',
    );
    const putting = q.put(4);
    expect(await q.get()).toBe(2);
    await putting;
    expect(await q.getBatch()).toEqual([3, 4]);
    expect(await q.getBatch(5)).toEqual([]);
    await expect(q.get({ timeoutMs: 5 })).rejects.toThrow(CoordinationTimeoutError);
    await q.put(5);
    // n = 0 is a batch of none, not a misuse, and takes nothing.
    expect(await q.getBatch(0)).toEqual([]);
    expect(await q.qsize()).toBe(1);
    await expect(client.queue("Q").get()).rejects.toThrow(
      /^Queue\.get: queue "Q" has maxsize 2, not 0$/,
    );
    await expect(client.queue("Q", { maxsize: 3 }).put(1)).rejects.toThrow(
      /^Queue\.put: queue "Q" has maxsize 2, not 3$/,
    );
    expect(() => client.queue("Q", { maxsize: -1 })).toThrow(/maxsize must be an integer ≥ 0/);
    // Its client gone, a get waiting is dropped: the value stays for the next.
    const gone = await cluster.client();
    const unbounded = gone.queue<string>("R");
    void unbounded.get().catch(() => {});
    await new Promise((r) => setTimeout(r, 20));
    await gone.close();
    await client.queue<string>("R").put("kept");
    expect(await client.queue<string>("R").get()).toBe("kept");
  });

  it("holds the futures of an item until a get takes it, then the taker's futures hold them", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const other = await cluster.client();
    const tasks = cluster.scheduler.state.tasks;
    const q = client.queue<Future<number>[]>("F", { maxsize: 1 });
    const f = client.submit("inc", 1) as Future<number>;
    await q.put([f]);
    f.release();
    // No room: the item's futures are let go again, not held for nothing.
    const g = client.submit("inc", 20) as Future<number>;
    await expect(q.put([g], { timeoutMs: 10 })).rejects.toThrow(/no room within 10 ms/);
    g.release();
    await eventually(() => !tasks.has(g.key), 5000, "g let go");
    await new Promise((r) => setTimeout(r, 30));
    expect(tasks.get(f.key)?.state).toBe("memory");
    const [got] = await other.queue<Future<number>[]>("F", { maxsize: 1 }).get();
    expect(await got).toBe(2);
    // The item taken, only the taker's future holds the key.
    got.release();
    await eventually(() => !tasks.has(f.key), 5000, "f let go");
    // getBatch takes them the same way.
    const h = client.submit("inc", 5) as Future<number>;
    await q.put([h]);
    h.release();
    const batch = await other.queue<Future<number>[]>("F", { maxsize: 1 }).getBatch();
    expect(await batch[0][0]).toBe(6);
    expect(await client.listDatasets()).toEqual([]);
  });
});

describe("held futures after their client or the cluster goes", () => {
  it("a put waiting for room, dropped with its client, lets its futures go", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const tasks = cluster.scheduler.state.tasks;
    await client.queue<number>("Q", { maxsize: 1 }).put(1); // full
    const leaving = await cluster.client();
    const f = leaving.submit("inc", 41) as Future<number>;
    await f;
    const putting = leaving.queue<Future<number>[]>("Q", { maxsize: 1 }).put([f]);
    const dropped = putting.catch((e: unknown) => e);
    await eventually(() => cluster.scheduler.state.datasets.size === 1, 5000, "held");
    await leaving.close();
    expect(await dropped).toBeInstanceOf(ClientClosedError);
    // Nobody else would let the dataset holding f's key go.
    await eventually(() => cluster.scheduler.state.datasets.size === 0, 5000, "unpublished");
    await eventually(() => !tasks.has(f.key), 5000, "f let go");
    expect(await client.queue<number>("Q", { maxsize: 1 }).getBatch()).toEqual([1]);
  });

  it("a wait cut short by its own client's close says the client was closed", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    expect(await client.lock("L").acquire()).toBe(true);
    const leaving = await cluster.client();
    const waits = [
      leaving.lock("L").acquire(),
      leaving.event("E").wait(),
      leaving.queue("Q").get(),
      leaving.variable("V").get(),
    ].map((p) => p.catch((e: unknown) => e));
    // A round trip after them: each wait is with the scheduler when the close comes,
    // cut short there rather than refused at once.
    await leaving.event("E").isSet();
    await leaving.close("done here");
    for (const err of await Promise.all(waits)) {
      expect(err).toBeInstanceOf(ClientClosedError);
      expect((err as Error).message).toBe("the client was closed: done here");
    }
  });

  it("a set or put cut short by its client's close lets its futures go, not held for good", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    const tasks = cluster.scheduler.state.tasks;
    const leaving = await cluster.client();
    const f = leaving.submit("inc", 1) as Future<number>;
    await f;
    // Closed at once: the values' hidden datasets are published, their set and put never sent.
    const setting = leaving.variable("V").set([f]);
    const putting = leaving.queue("Q").put({ f });
    await leaving.close();
    await expect(setting).rejects.toBeInstanceOf(ClientClosedError);
    await expect(putting).rejects.toBeInstanceOf(ClientClosedError);
    await eventually(() => cluster.scheduler.state.datasets.size === 0, 5000, "unpublished");
    await eventually(() => !tasks.has(f.key), 5000, "f let go");
  });

  for (const op of ["variable-set", "queue-put"] as const) {
    it(`a ${op} whose client's connection is lost after the value's dataset is published lets its futures go`, async () => {
      const { cluster, client } = await testCluster({ workers: 1 });
      const tasks = cluster.scheduler.state.tasks;
      const owners = cluster.scheduler.coordination.heldOwners;
      // Set or put, a dataset is the variable's or queue's: no client's to let go.
      const g = client.submit("inc", 2) as Future<number>;
      await (op === "variable-set" ? client.variable("W").set([g]) : client.queue("R").put([g]));
      expect(owners.size).toBe(0);
      const dying = await cluster.client();
      const f = dying.submit("inc", 1) as Future<number>;
      await f;
      // The process dies between the two: the dataset published, the set or put never sent.
      const conn = (dying as unknown as { conn: { comm: { abort(): void } } }).conn;
      beforeRequest(dying, op, async () => conn.comm.abort());
      const sent = op === "variable-set" ? dying.variable("V").set([f]) : dying.queue("Q").put([f]);
      await expect(sent).rejects.toBeInstanceOf(ClientClosedError);
      // Nobody else knows of the dataset: before, it held f's key for good.
      await eventually(() => cluster.scheduler.state.datasets.size === 1, 5000, "unpublished");
      await eventually(() => !tasks.has(f.key), 5000, "f let go");
      expect(owners.size).toBe(0);
    });
  }

  it("a variable's value replaced by a client that leaves before its answer comes lets its futures go", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const tasks = cluster.scheduler.state.tasks;
    const f = client.submit("inc", 1) as Future<number>;
    await client.variable("V").set([f]);
    f.release();
    expect(cluster.scheduler.state.datasets.size).toBe(1);
    // Set again by another client, whose answer never reaches it (it left meanwhile):
    // the old value's dataset must not wait for that client to let it go.
    const other = await cluster.client();
    const answer = replyTo(cluster.scheduler, other.id, {
      op: "variable-set",
      requestId: 1,
      name: "V",
      value: new ClonedValue({ data: 2 }),
      held: null,
    });
    expect(answer).toEqual({ op: "reply", requestId: 1, result: null });
    await eventually(() => cluster.scheduler.state.datasets.size === 0, 5000, "unpublished");
    await eventually(() => !tasks.has(f.key), 5000, "f let go");
    expect(await client.variable("V").get()).toBe(2);
  });

  it("a queue item taken by a client that leaves before it lets the item's dataset go lets its futures go", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const tasks = cluster.scheduler.state.tasks;
    const f = client.submit("inc", 1) as Future<number>;
    await client.queue("Q").put([f]);
    f.release();
    expect(cluster.scheduler.state.datasets.size).toBe(1);
    // Taken by another client, which never reads the answer (it dies meanwhile).
    const taker = await cluster.client();
    const answer = replyTo(cluster.scheduler, taker.id, {
      op: "queue-get",
      requestId: 1,
      name: "Q",
      maxsize: 0,
      timeoutMs: null,
    });
    expect(answer).toMatchObject({ op: "reply", requestId: 1, result: { value: {} } });
    await new Promise((r) => setTimeout(r, 50));
    expect(cluster.scheduler.state.datasets.size).toBe(1);
    await taker.close();
    await eventually(() => cluster.scheduler.state.datasets.size === 0, 5000, "unpublished");
    await eventually(() => !tasks.has(f.key), 5000, "f let go");
    // A taker that lets the dataset go itself leaves nothing for the scheduler to remember.
    const g = client.submit("inc", 2) as Future<number>;
    await client.queue("Q").put([g]);
    expect(await client.queue<Future<number>[]>("Q").get()).toHaveLength(1);
    const owners = cluster.scheduler.coordination.heldOwners;
    await eventually(() => owners.size === 0, 5000, "forgotten");
  });

  it("a variable whose futures a restart dropped: get rejects, saying so, instead of asking for ever", async () => {
    const { client } = await testCluster({ workers: 1 });
    const v = client.variable<Future<number>[]>("V");
    const f = client.submit("inc", 1) as Future<number>;
    await f;
    await v.set([f]);
    await client.restart();
    await expect(v.get({ timeoutMs: 1000 })).rejects.toThrow(
      'Variable.get "V": the futures of its value were lost (the cluster restarted since it was set, or its dataset was removed): set it again',
    );
    await v.set([client.submit("inc", 2) as Future<number>]);
    expect(await (await v.get())[0]).toBe(3);
  });
  it("a queue's items whose futures a restart dropped: get and getBatch reject, losing none of the other items taken", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const q = client.queue<unknown>("Q");
    const f = client.submit("inc", 1) as Future<number>;
    await f;
    await q.put([f]);
    await q.put([f]);
    await client.restart();
    await expect(q.get()).rejects.toThrow(
      'Queue.get "Q": the futures of the item were lost (the cluster restarted since it was set, or its dataset was removed)',
    );
    // Items put after the restart, one of them holding a future: given with the error.
    await q.put("plain");
    const g = client.submit("inc", 5) as Future<number>;
    await g;
    await q.put({ g });
    g.release();
    const err = await q.getBatch().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueueItemsLostError);
    const lost = err as QueueItemsLostError;
    expect(lost.message).toBe(
      'Queue.getBatch "Q": the futures of 1 of the 3 items taken were lost (the cluster restarted since they were put, or their dataset was removed); the other 2 are this error\'s items',
    );
    expect(lost).toMatchObject({ queue: "Q", lost: 1, taken: 3 });
    expect(lost.items[0]).toBe("plain");
    const got = (lost.items[1] as { g: Future<number> }).g;
    expect(await got).toBe(6);
    expect(await q.qsize()).toBe(0);
    // The item's dataset was let go: only this client's future holds the key now.
    expect(cluster.scheduler.state.datasets.size).toBe(0);
    got.release();
    await eventually(() => !cluster.scheduler.state.tasks.has(g.key), 5000, "g let go");
  });
});

describe("the scheduler's refusals", () => {
  it("are SchedulerReplyErrors naming the method that asked, with the op and the scheduler's reason", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    await client.queue("Q", { maxsize: 2 }).put(1);
    const err = await client
      .queue("Q")
      .get()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchedulerReplyError);
    expect(err).toMatchObject({
      name: "SchedulerReplyError",
      op: "queue-get",
      method: "Queue.get",
      reason: 'queue "Q" has maxsize 2, not 0',
      message: 'Queue.get: queue "Q" has maxsize 2, not 0',
    });
    const lock = client.lock("M");
    expect(await lock.acquire()).toBe(true);
    // The scheduler forgets the lease (as a scheduler that lost its state would).
    cluster.scheduler.coordination.dropAll();
    const refused = await lock.release().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SchedulerReplyError);
    expect(refused).toMatchObject({ op: "lock-release", method: "Lock.release" });
    expect((refused as Error).message).toMatch(
      /^Lock\.release: lease [-0-9a-f]+ of "M" is not held \(released already, or its client left\)$/,
    );
  });

  it("are not what a lost connection is: a wait it cuts short rejects with ClientClosedError", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const waiting = client
      .event("E")
      .wait()
      .catch((e: unknown) => e);
    await client.event("E").isSet();
    await cluster.close();
    const err = await waiting;
    expect(err).toBeInstanceOf(ClientClosedError);
    expect(err).not.toBeInstanceOf(SchedulerReplyError);
  });
});
