import { afterEach, describe, expect, it } from "vitest";
import type { PublishDatasetMsg } from "../protocol/messagesClient.ts";
import { SchedulerReplyError } from "./errors.ts";
import type { Requests } from "./requests.ts";
import type { Submissions } from "./submissions.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";

afterEach(closeTestClusters);

/** Fails if `p` has not settled within `ms`: the bug is a wait forever. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

describe("a request the scheduler refuses as malformed", () => {
  it("a cancel of a key that is not a string fails with the scheduler's reason, not waits forever", async () => {
    const { client, cluster } = await testCluster();
    const cancelled = within(client.cancelKeys([5 as unknown as string]), 3_000);
    await expect(cancelled).rejects.toThrow(SchedulerReplyError);
    await expect(cancelled).rejects.toThrow(/keys must be an array of keys/);
    expect(cluster.scheduler.counters.rejectedMessages).toBe(1);
    // The client goes on.
    expect(await client.submit("inc", 1).result()).toBe(2);
  });

  it("a request answered by stimulus id fails with the scheduler's reason, not waits forever", async () => {
    const { client } = await testCluster();
    const requests = (client as unknown as { requests: Requests }).requests;
    const msg: PublishDatasetMsg = {
      op: "publish-dataset",
      name: "",
      keys: [],
      data: null,
      clientId: client.id,
      stimulusId: requests.stimulusId("publish"),
    };
    const published = within(requests.ask(msg), 3_000);
    await expect(published).rejects.toThrow(/name must be a non-empty string/);
  });

  it("a graph refused fails its futures with the scheduler's reason, not waits forever", async () => {
    const { client, cluster } = await testCluster();
    const submissions = (client as unknown as { submissions: Submissions }).submissions;
    // A client bug: tasks sent as a plain object, not a Map.
    const [refused] = submissions.submit({} as unknown as Map<string, never>, ["refused-k"]);
    const err = await within(refused.result(), 3_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchedulerReplyError);
    expect((err as SchedulerReplyError).op).toBe("update-graph");
    expect((err as SchedulerReplyError).message).toMatch(
      /refused the graph submitted as malformed: invalid client-message update-graph: tasks must be a Map/,
    );
    expect(cluster.scheduler.counters.rejectedMessages).toBe(1);
    // The client goes on.
    expect(await client.submit("inc", 1).result()).toBe(2);
    expect(await client.gather(client.map("inc", [1, 2, 3]))).toEqual([2, 3, 4]);
  });

  it("a graph refused among many asks of a pending key fails its futures, the others bounded", async () => {
    const { client } = await testCluster();
    const submissions = (client as unknown as { submissions: Submissions }).submissions;
    // A key pending for a while, asked for again and again: the client asks the
    // scheduler to answer a request, which tells it which asks were taken.
    const slow = client.submit("slowInc", 1, 1500);
    let most = 0;
    for (let i = 0; i < 2000; i++) {
      client.submit("slowInc", 1, 1500);
      most = Math.max(most, submissions.refusable);
      if (i % 100 === 0) await new Promise((r) => setImmediate(r));
    }
    await client.whoHas([]);
    expect(submissions.refusable).toBeLessThan(10);
    expect(most).toBeLessThan(1000);
    // Refused just before a request is answered: its futures fail all the same.
    const [refused] = submissions.submit({} as unknown as Map<string, never>, ["refused-j"]);
    await client.whoHas([]);
    await expect(within(refused.result(), 3_000)).rejects.toThrow(/refused the graph submitted/);
    expect(await slow).toBe(2);
  });
});
