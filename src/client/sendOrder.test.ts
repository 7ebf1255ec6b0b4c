import { afterEach, describe, expect, it } from "vitest";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { inc } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("coordination calls of one client on one name, not awaited each", () => {
  it("reach the scheduler in the order they were made, a value with futures among them", async () => {
    const { client } = await testCluster({ workers: 1 });
    const f = client.submit(inc, 1);
    await f;
    const v = client.variable("V");
    // Its value's futures are published first (a round trip): the delete after it waited for none.
    const set = v.set({ f: [f] });
    const deleted = v.delete();
    const again = v.set(2);
    await Promise.all([set, deleted, again]);
    expect(await v.get({ timeoutMs: 0 })).toBe(2);

    const q = client.queue("Q");
    const puts = [q.put({ f: [f] }), q.put("b"), q.put("c")];
    const size = q.qsize();
    await Promise.all(puts);
    expect(await size).toBe(3);
    const [first, second, third] = await q.getBatch();
    expect(await (first as { f: Promise<number>[] }).f[0]).toBe(2);
    expect([second, third]).toEqual(["b", "c"]);

    // Without futures too: a set (copied, then sent) and a delete right after it.
    const plain = client.variable("P");
    const [a, b] = [plain.set(1), plain.delete()];
    await Promise.all([a, b]);
    await expect(plain.get({ timeoutMs: 0 })).rejects.toThrow(/timed out/);
  });

  it("keep their order past a call refused before it sent (its value cannot be copied)", async () => {
    const { client } = await testCluster({ workers: 1 });
    const f = client.submit(inc, 1);
    await f;
    const v = client.variable("V");
    // The refused set gives up its turn at once, while the first still publishes its futures.
    const set = v.set({ f: [f] });
    const refused = v.set({ g: () => 1 });
    const again = v.set(2);
    await expect(refused).rejects.toThrow(/function/);
    await Promise.all([set, again]);
    expect(await v.get({ timeoutMs: 0 })).toBe(2);

    const q = client.queue("Q");
    const first = q.put({ f: [f] });
    const bad = q.put({ g: () => 1 });
    const size = q.qsize();
    await expect(bad).rejects.toThrow(/function/);
    await first;
    expect(await size).toBe(1);
  });

  it("wait for the earlier ones to be sent, not answered: a put waiting for room lets a get in", async () => {
    const { client } = await testCluster({ workers: 0 });
    const q = client.queue<number>("F", { maxsize: 1 });
    await q.put(1);
    const waiting = q.put(2);
    expect(await q.get({ timeoutMs: 5_000 })).toBe(1);
    await waiting;
    expect(await q.get({ timeoutMs: 0 })).toBe(2);
  });
});

describe("SendOrder", () => {
  it("a call whose prepare fails lets the later ones go only after the earlier ones sent", async () => {
    const { SendOrder } = await import("./sendOrder.ts");
    const order = new SendOrder();
    const sent: string[] = [];
    let prepared!: () => void;
    const slow = new Promise<void>((resolve) => {
      prepared = resolve;
    });
    // A set whose value's futures are being published, a set refusing its value, a delete.
    const a = order.inOrder(
      "k",
      () => slow,
      async () => void sent.push("a"),
    );
    const b = order.inOrder(
      "k",
      () => {
        throw new TypeError("not data");
      },
      async () => void sent.push("b"),
    );
    const c = order.inOrder(
      "k",
      () => null,
      async () => void sent.push("c"),
    );
    await expect(b).rejects.toThrow("not data");
    prepared();
    await Promise.all([a, c]);
    expect(sent).toEqual(["a", "c"]);
    // And the turn is given up for good: a later call on the name is not held back.
    await order.inOrder(
      "k",
      () => null,
      async () => void sent.push("d"),
    );
    expect(sent).toEqual(["a", "c", "d"]);
  });
});
