import { afterEach, describe, expect, it } from "vitest";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { slowInc } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("client calls given what a user may easily give by mistake", () => {
  it("cancel refuses keys and other non-futures instead of waiting forever", async () => {
    const { client } = await testCluster();
    const f = client.submit(slowInc, 1, 60_000);
    await expect(client.cancel([f.key as never])).rejects.toThrow(/cancel: expected futures, got/);
    await expect(client.cancel(null as never)).rejects.toThrow(/cancel: expected futures/);
    await client.cancel([f]);
    expect(f.status).toBe("cancelled");
  });

  it('"__proto__" cannot name a scattered value or an event topic (it would name a prototype)', async () => {
    const { client } = await testCluster();
    const named = JSON.parse('{"__proto__": 1, "b": 2}') as Record<string, number>;
    await expect(client.scatter(named)).rejects.toThrow('scatter: "__proto__" cannot name a value');
    await expect(client.logEvent("__proto__", { x: 1 })).rejects.toThrow(
      'logEvent: "__proto__" cannot be a topic',
    );
    await client.logEvent("fine", { x: 1 });
    expect(Object.keys(await client.getEvents())).toContain("fine");
  });
});
