import { afterEach, describe, expect, it } from "vitest";
import { ClonedValue } from "../comm/clonedValue.ts";
import { decodeDataset, encodeDataset } from "./datasets.ts";
import { DatasetError } from "./errors.ts";
import { Future } from "./future.ts";
import type { LocalCluster } from "./localCluster.ts";
import { closeTestClusters, eventually, testCluster } from "./testCluster.ts";
import { add, inc, slowInc } from "./testTasks.ts";

afterEach(closeTestClusters);

function schedulerHas(cluster: LocalCluster, key: string): boolean {
  return cluster.scheduler.state.tasks.has(key);
}

describe("datasets", () => {
  for (const protocol of ["inproc", "tcp"] as const) {
    it(`another client gets the futures, which outlive their publisher (${protocol})`, async () => {
      const { cluster, client: a } = await testCluster({ protocol });
      const b = await cluster.client();
      const x = a.submit(slowInc, 1, 100);
      const y = a.submit(inc, x);
      const when = new Date(0);
      await a.publishDataset("results", {
        first: x,
        rest: [y, "label", 3],
        meta: new Map([["when", when]]),
      });
      await a.close();
      const got = (await b.getDataset("results")) as {
        first: Future<number>;
        rest: [Future<number>, string, number];
        meta: Map<string, Date>;
      };
      expect(got.first).toBeInstanceOf(Future);
      expect(got.first.key).toBe(x.key);
      expect(got.first.host).toBe(b);
      expect(await b.gather(got)).toEqual({
        first: 2,
        rest: [3, "label", 3],
        meta: new Map([["when", when]]),
      });
      await b.close();
    });
  }

  it("an own __proto__ key stays a key; a future alone is refused (it is a thenable)", async () => {
    const { client } = await testCluster();
    const f = client.submit(add, 1, 2);
    const odd: Record<string, unknown> = {};
    Object.defineProperty(odd, "__proto__", { value: f, enumerable: true });
    await client.publishDataset("odd", odd);
    const back = (await client.getDataset("odd")) as Record<string, unknown>;
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    const got = Object.getOwnPropertyDescriptor(back, "__proto__")?.value;
    expect(got).toBeInstanceOf(Future);
    expect(await got).toBe(3);
    await expect(client.publishDataset("one", f)).rejects.toThrow(/publish \[future\]/);
  });

  it("a future found twice in a dataset is one of its keys, once", async () => {
    const { client } = await testCluster();
    const f = client.submit(inc, 1);
    const { keys } = encodeDataset({ a: f, b: [f] }, () => undefined);
    expect(keys).toEqual([f.key]);
    expect(await f).toBe(2);
  });

  it("a dataset got is a copy: changing it changes no one else's", async () => {
    const { client } = await testCluster();
    await client.publishDataset("d", { xs: [1] });
    const got = (await client.getDataset("d")) as { xs: number[] };
    got.xs.push(2);
    expect(await client.getDataset("d")).toEqual({ xs: [1] });
  });

  it("names are unique unless overridden; list, unpublish and defaults", async () => {
    const { cluster, client } = await testCluster();
    const one = client.submit(inc, 1);
    const two = client.submit(inc, 2);
    await client.publishDataset("b", [one]);
    await client.publishDataset("a", 5);
    await expect(client.publishDataset("b", [two])).rejects.toThrow(DatasetError);
    await expect(client.publishDataset("b", [two])).rejects.toThrow(
      /^publishDataset: .*already exists/,
    );
    expect(await client.listDatasets()).toEqual(["a", "b"]);
    await client.publishDataset("b", [two], { override: true });
    const [got] = (await client.getDataset("b")) as Future<number>[];
    expect(got.key).toBe(two.key);
    // The old key is let go by the dataset once its own future is released too.
    const oneKey = one.key;
    await one;
    one.release();
    await eventually(() => !schedulerHas(cluster, oneKey), 5000, "one forgotten");
    expect(await client.unpublishDataset("b")).toBe(true);
    expect(await client.unpublishDataset("b")).toBe(false);
    expect(await client.listDatasets()).toEqual(["a"]);
    await expect(client.getDataset("b")).rejects.toThrow(/no dataset "b"/);
    expect(await client.getDataset("b", { default: null })).toBeNull();
    // A default given as undefined is a default: it is what comes back.
    expect(await client.getDataset("b", { default: undefined })).toBeUndefined();
    // The future got before the unpublish still holds its key.
    expect(await got).toBe(3);
    expect(await client.getDataset("a")).toBe(5);
  });

  it("holds its keys alone, and lets them go when unpublished", async () => {
    const { cluster, client } = await testCluster();
    const f = client.submit(inc, 10);
    const key = f.key;
    await client.publishDataset("held", [f]);
    await f;
    f.release();
    await new Promise((r) => setTimeout(r, 50));
    expect(cluster.scheduler.state.tasks.get(key)?.state).toBe("memory");
    await client.unpublishDataset("held");
    await eventually(
      () => !schedulerHas(cluster, key) && cluster.workers.every((w) => !w.state.tasks.has(key)),
      5000,
      "the key forgotten everywhere",
    );
  });

  it("a future got while the client releases its last one of the key holds the key", async () => {
    const { cluster, client } = await testCluster();
    const f = client.submit(inc, 1);
    await f;
    const key = f.key;
    await client.publishDataset("race", [f]);
    const getting = client.getDataset<Future<number>[]>("race");
    // The release goes out after the request: the scheduler sees the client let go.
    f.release();
    const [g] = await getting;
    expect(g.key).toBe(key);
    await client.unpublishDataset("race");
    // The new future still holds the key, as the client wanted it again.
    await new Promise((r) => setTimeout(r, 50));
    expect(cluster.scheduler.state.tasks.get(key)?.state).toBe("memory");
    expect(await g).toBe(2);
    g.release();
    await eventually(() => !schedulerHas(cluster, key), 5000, "the key forgotten");
  });

  it("refuses bad input, saying why", async () => {
    const { cluster, client } = await testCluster();
    const other = await cluster.client();
    const f = client.submit(inc, 1);
    await expect(client.publishDataset("", 1)).rejects.toThrow(TypeError);
    // The names of the hidden datasets of variables and queues: one published there
    // would be missing from listDatasets.
    await expect(client.publishDataset("weft:held/mine", [1])).rejects.toThrow(
      new TypeError(
        'publishDataset: "weft:held/mine": names starting with weft:held/ are kept for the values of variables and queues',
      ),
    );
    await expect(client.getDataset(7 as unknown as string)).rejects.toThrow(/non-empty string/);
    await expect(client.publishDataset("m", new Map([["f", f]]))).rejects.toThrow(
      /inside a Map is not searched/,
    );
    await expect(client.publishDataset("fn", { g: () => 1 })).rejects.toThrow(/cannot be sent/);
    await expect(other.publishDataset("theirs", [f])).rejects.toThrow(/another client/);
    const gone = client.submit(inc, 2);
    gone.release();
    await expect(client.publishDataset("gone", [gone])).rejects.toThrow(/was released/);
    // A key the scheduler no longer has (cancelled).
    const c = client.submit(slowInc, 3, 200);
    const copy = new Future(client, c.key);
    await client.cancel(c);
    await expect(client.publishDataset("cancelled", { copy })).rejects.toThrow(/unknown keys/);
    expect(await client.listDatasets()).toEqual([]);
    await other.close();
    await expect(cluster.client({ name: "published" })).rejects.toThrow(/stand-in clients/);
  });

  it("a client getting a dataset of a cancelled key gets a cancelled future", async () => {
    const { client } = await testCluster();
    const b = await client.submit(inc, 1); // settle the cluster
    expect(b).toBe(2);
    const c = client.submit(slowInc, 5, 300);
    await client.publishDataset("soon-gone", [c]);
    await client.cancel(c, { force: true });
    const [got] = (await client.getDataset("soon-gone")) as Future[];
    await expect(got).rejects.toThrow(/cancelled/);
  });

  it("a request that cannot be sent fails with a DatasetError saying why", async () => {
    const { cluster } = await testCluster({ protocol: "tcp" });
    const small = await cluster.client({ maxMessageBytes: 4096 });
    const err = await small
      .publishDataset("big", { data: new Uint8Array(100_000) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatasetError);
    expect((err as Error).message).toMatch(/^publishDataset: the scheduler could not be told: /);
    expect(await small.listDatasets()).toEqual([]);
  });

  it("a malformed dataset from the scheduler makes no future", () => {
    const made: string[] = [];
    const futureOf = (key: string): Future => {
      made.push(key);
      throw new Error("not expected");
    };
    for (const data of [
      null,
      new ClonedValue({ value: [null], slots: "x" }),
      new ClonedValue({ value: [null], slots: [{ steps: [0], key: 5 }] }),
      // The first place is fine, the second goes through a number: nothing is made.
      new ClonedValue({
        value: { a: [null], b: 1 },
        slots: [
          { steps: ["a", 0], key: "k" },
          { steps: ["b", "c"], key: "k" },
        ],
      }),
    ]) {
      expect(() => decodeDataset("d", data, futureOf)).toThrow(DatasetError);
    }
    expect(made).toEqual([]);
  });
});
