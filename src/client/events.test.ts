import { afterEach, describe, expect, it } from "vitest";
import { memoryLogger } from "../worker/testWorker.ts";
import { type ClusterEvent, decodeEvent, Subscriptions } from "./events.ts";
import { closeTestClusters, eventually, extraWorker, testCluster } from "./testCluster.ts";
import { logsEvent } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("events: logEvent, getEvents, subscribeTopic", () => {
  for (const protocol of ["inproc", "tcp"] as const) {
    it(`keeps each topic's events, copied, and sends them to subscribers (${protocol})`, async () => {
      const { cluster, client } = await testCluster({ workers: 1, protocol });
      const other = await cluster.client();
      const heard: ClusterEvent[] = [];
      await other.subscribeTopic("jobs", (e) => {
        heard.push(e);
      });
      const before = Date.now() / 1000;
      const msg = { job: 1, at: new Date(0), tags: new Set(["a"]) };
      await client.logEvent("jobs", msg);
      msg.job = 99;
      await client.logEvent(["jobs", "audit"], "second");
      const jobs = await client.getEvents("jobs");
      expect(jobs.map(([, m]) => m)).toEqual([
        { job: 1, at: new Date(0), tags: new Set(["a"]) },
        "second",
      ]);
      const [t] = jobs[0];
      expect(t).toBeGreaterThanOrEqual(before - 1);
      expect(t).toBeLessThanOrEqual(Date.now() / 1000 + 1);
      expect((await client.getEvents("audit")).map(([, m]) => m)).toEqual(["second"]);
      expect(await client.getEvents("nothing")).toEqual([]);
      await eventually(() => heard.length === 2, 5000, "both events heard");
      expect(heard.map(([, m]) => m)).toEqual([
        { job: 1, at: new Date(0), tags: new Set(["a"]) },
        "second",
      ]);
      // Unsubscribed, the handler hears no more.
      await other.unsubscribeTopic("jobs");
      await client.logEvent("jobs", 3);
      await new Promise((r) => setTimeout(r, 50));
      expect(heard).toHaveLength(2);
      // Every topic, the scheduler's own among them.
      const all = await client.getEvents();
      expect(Object.keys(all)).toEqual(expect.arrayContaining(["jobs", "audit", "all"]));
      // Copied back as a topic's own are: the Date and the Set, not what carried them.
      expect(all.jobs).toEqual(await client.getEvents("jobs"));
      const worker = cluster.workers[0].address;
      expect(all.all.map(([, m]) => m)).toContainEqual({ action: "add-worker", worker });
      expect((await client.getEvents(worker)).map(([, m]) => m)).toContainEqual({
        action: "add-worker",
        worker,
      });
    });
  }

  it("tasks log events through their client; worker joins and departures are events", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const heard: unknown[] = [];
    await client.subscribeTopic("all", ([, m]) => {
      heard.push(m);
    });
    const tasks = [client.submit(logsEvent, "tasks", 1), client.submit(logsEvent, "tasks", 2)];
    expect(await client.gather(tasks)).toEqual([1, 2]);
    const logged = (await client.getEvents("tasks")).map(([, m]) => m);
    expect(logged).toEqual(expect.arrayContaining([{ task: 1 }, { task: 2 }]));
    const extra = await extraWorker(cluster);
    const address = extra.address;
    await eventually(
      () =>
        heard.some(
          (m) => JSON.stringify(m) === JSON.stringify({ action: "add-worker", worker: address }),
        ),
      5000,
      "add-worker heard",
    );
    await extra.close();
    await eventually(
      () =>
        heard.some(
          (m) => JSON.stringify(m) === JSON.stringify({ action: "remove-worker", worker: address }),
        ),
      5000,
      "remove-worker heard",
    );
  });

  it("a handler that throws is logged, and the others still hear; bad arguments are refused", async () => {
    const { client } = await testCluster({ workers: 1 });
    const heard: unknown[] = [];
    await client.subscribeTopic("bad", () => {
      throw new Error("handler broke");
    });
    await client.subscribeTopic("good", ([, m]) => {
      heard.push(m);
    });
    await client.logEvent(["bad", "good"], 1);
    await eventually(() => heard.length === 1, 5000, "the good handler heard");
    await expect(client.logEvent("", 1)).rejects.toThrow(
      /logEvent: the topic must be a non-empty string/,
    );
    await expect(client.logEvent([], 1)).rejects.toThrow(/logEvent: the topic must be/);
    await expect(client.logEvent("t", () => 1)).rejects.toThrow(
      /logEvent: the value cannot be sent/,
    );
    const f = client.submit("inc", 1);
    await expect(client.logEvent("t", { f })).rejects.toThrow(
      /a future cannot be an event's message/,
    );
    await f;
    await expect(client.subscribeTopic("t", 5 as never)).rejects.toThrow(
      /the handler must be a function/,
    );
    await expect(client.getEvents(7 as never)).rejects.toThrow(/getEvents: the topic must be/);
  });
});

describe("the client's side of events, apart from a cluster", () => {
  it("an event got is the client's own copy; a malformed one is refused", () => {
    const msg = { n: [1] };
    const [time, got] = decodeEvent([5, msg]);
    expect(time).toBe(5);
    expect(got).toEqual(msg);
    expect(got).not.toBe(msg);
    for (const bad of [[5], [5, msg, 6], ["5", msg], null]) {
      expect(() => decodeEvent(bad)).toThrow("the scheduler sent a malformed event");
    }
  });

  it("subscribing again replaces the handler; what a handler throws or rejects with is logged", async () => {
    const { logger, records } = memoryLogger();
    const subs = new Subscriptions(logger);
    const heard: string[] = [];
    subs.set("t", () => {
      heard.push("first");
    });
    subs.set("t", ([, m]) => {
      heard.push(`second ${m}`);
    });
    subs.deliver("t", [1, "a"]);
    expect(heard).toEqual(["second a"]);
    subs.set("t", () => {
      throw new Error("thrown");
    });
    subs.deliver("t", [1, "b"]);
    let rejected = (): void => {};
    const handled = new Promise<void>((resolve) => {
      rejected = resolve;
    });
    subs.set("t", async () => {
      rejected();
      throw new Error("rejected");
    });
    subs.deliver("t", [1, "c"]);
    await handled;
    // A thenable that is not a Promise (another library's): before, its rejection was unhandled.
    const thenable = {
      // biome-ignore lint/suspicious/noThenProperty: the test is of a thenable that is not a Promise
      then: (_ok: unknown, no: (e: unknown) => void) => no(new Error("thenable")),
    };
    subs.set("t", () => thenable as unknown as Promise<void>);
    subs.deliver("t", [1, "d"]);
    // Its rejection is caught in the microtasks that follow: all run before the next macrotask.
    await new Promise((resolve) => setImmediate(resolve));
    expect(records.map((r) => [r.msg, r.topic, (r.err as { message: string }).message])).toEqual([
      ["an event handler failed (subscribeTopic)", "t", "thrown"],
      ["an event handler failed (subscribeTopic)", "t", "rejected"],
      ["an event handler failed (subscribeTopic)", "t", "thenable"],
    ]);
  });
});
