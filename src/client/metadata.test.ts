import { afterEach, describe, expect, it } from "vitest";
import { MetadataKeyError, SchedulerReplyError } from "./errors.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";

afterEach(closeTestClusters);

describe("setMetadata and getMetadata", () => {
  for (const protocol of ["inproc", "tcp"] as const) {
    it(`keeps values by key path, copied, for every client (${protocol})`, async () => {
      const { cluster, client } = await testCluster({ workers: 1, protocol });
      const other = await cluster.client();
      const model = { version: 3, trained: new Date(0), tags: new Set(["a"]) };
      await client.setMetadata("model", model);
      model.version = 99;
      expect(await other.getMetadata("model")).toEqual({
        version: 3,
        trained: new Date(0),
        tags: new Set(["a"]),
      });
      await client.setMetadata(["runs", "r1", "loss"], 0.5);
      await client.setMetadata(["runs", "r2"], { loss: 0.25 });
      expect(await other.getMetadata(["runs", "r1", "loss"])).toBe(0.5);
      expect(await other.getMetadata(["runs", "r2", "loss"])).toBe(0.25);
      const runs = await other.getMetadata<Record<string, { loss: number }>>("runs");
      expect(runs).toEqual({ r1: { loss: 0.5 }, r2: { loss: 0.25 } });
      runs.r1.loss = 7;
      expect(await other.getMetadata(["runs", "r1", "loss"])).toBe(0.5);
      const all = await other.getMetadata<Record<string, unknown>>([]);
      expect(Object.keys(all).sort()).toEqual(["model", "runs"]);
      await client.setMetadata("__proto__", 1);
      expect(await other.getMetadata("__proto__")).toBe(1);
      // A typed array alone travels as its raw bytes (over TCP, which the scheduler
      // forwarded unread): kept as itself, not as what the scheduler held of it.
      await client.setMetadata(["model", "weights"], new Float32Array([0.5, 2]));
      await client.setMetadata("raw", new Uint8Array([1, 2, 3]));
      expect(await other.getMetadata(["model", "weights"])).toEqual(new Float32Array([0.5, 2]));
      expect(await other.getMetadata("raw")).toEqual(new Uint8Array([1, 2, 3]));
      expect(await other.getMetadata(["model"])).toMatchObject({
        weights: new Float32Array([0.5, 2]),
      });
    });
  }

  it("a missing key rejects unless a default is given; bad arguments are refused", async () => {
    const { client } = await testCluster({ workers: 1 });
    const err = await client.getMetadata(["no", "such"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MetadataKeyError);
    expect((err as Error).message).toBe('getMetadata: no metadata at ["no","such"]');
    expect(await client.getMetadata("no", { default: 5 })).toBe(5);
    // A default given as undefined is a default: it is what comes back.
    expect(await client.getMetadata("no", { default: undefined })).toBeUndefined();
    await client.setMetadata("leaf", 1);
    await expect(client.setMetadata(["leaf", "below"], 2)).rejects.toThrow(
      /\["leaf"\] holds a value, not metadata under keys/,
    );
    expect(await client.getMetadata(["leaf", "below"], { default: null })).toBeNull();
    // A path goes into plain objects only, when got as when set: not an array's
    // elements or length, nor an error's message.
    await client.setMetadata("list", [1, 2]);
    await client.setMetadata("err", new Error("boom"));
    for (const path of [
      ["list", "0"],
      ["list", "length"],
      ["err", "message"],
    ]) {
      expect(await client.getMetadata(path, { default: "none" })).toBe("none");
    }
    const refused = await client.setMetadata(["list", "0"], 5).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SchedulerReplyError);
    expect((refused as Error).message).toMatch(/\["list"\] holds a value, not metadata under keys/);
    await client.setMetadata("nothing", null);
    await expect(client.setMetadata(["nothing", "below"], 2)).rejects.toThrow(
      /\["nothing"\] holds a value, not metadata under keys/,
    );
    await expect(client.setMetadata([], 1)).rejects.toThrow(
      new TypeError(
        "setMetadata: the keys must be a string or an array of strings (at least one), got []",
      ),
    );
    await expect(client.setMetadata(3 as never, 1)).rejects.toThrow(/the keys must be a string/);
    await expect(client.setMetadata("f", () => 1)).rejects.toThrow(/the value cannot be sent/);
  });
});
