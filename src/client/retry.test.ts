import { afterEach, describe, expect, it } from "vitest";
import { RemoteTaskError } from "./errors.ts";
import { closeTestClusters, eventually, testCluster } from "./testCluster.ts";
import { flaky, inc } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("retry: computing failed futures again", () => {
  it("runs a failed task again, with the dependents that failed through it", async () => {
    const { client } = await testCluster();
    const id = `retry-${Math.random()}`;
    const first = client.submit(flaky, id, 1, 41);
    const next = client.submit(inc, first);
    await expect(next).rejects.toBeInstanceOf(RemoteTaskError);
    await expect(first).rejects.toThrow(`attempt 1 of ${id} failed`);
    // The dependent alone: its failed input goes first.
    expect(await client.retry(next)).toEqual([next.key]);
    expect(next.status).toBe("pending");
    expect(first.status).toBe("pending");
    expect(await next).toBe(42);
    expect(await first).toBe(41);
    // A future that did not fail is left as it is.
    expect(await client.retry([first, next])).toEqual([]);
  });

  it("Future.retry, again and again while it fails", async () => {
    const { client } = await testCluster();
    const id = `retry-${Math.random()}`;
    const f = client.submit(flaky, id, 2, 7);
    await expect(f).rejects.toThrow("attempt 1");
    await f.retry();
    await expect(f).rejects.toThrow("attempt 2");
    await f.retry();
    expect(await f).toBe(7);
  });

  it("another client's future of a key retried is pending again, and gets the new outcome", async () => {
    const { cluster, client } = await testCluster();
    const other = await cluster.client();
    const id = `retry-${Math.random()}`;
    const mine = client.submit(flaky, id, 1, 5);
    const theirs = other.submit(flaky, id, 1, 5);
    expect(theirs.key).toBe(mine.key);
    await expect(theirs).rejects.toThrow("attempt 1");
    await mine.exception();
    expect(await client.retry(mine)).toEqual([mine.key]);
    await eventually(() => theirs.status !== "error", 5_000, "theirs sent back");
    expect(await theirs).toBe(5);
  });

  it("refuses what is not a future of its own", async () => {
    const { cluster, client } = await testCluster();
    const other = await cluster.client();
    const theirs = other.submit(inc, 1);
    await expect(client.retry(theirs)).rejects.toThrow("a future of another client");
    await expect(client.retry(["x"] as never)).rejects.toThrow("retry: expected futures");
    // A key, not an array: refused as it is, not each of its characters.
    await expect(client.retry("xy" as never)).rejects.toThrow(
      'retry: expected a future or an array of futures, got "xy"',
    );
  });
});
