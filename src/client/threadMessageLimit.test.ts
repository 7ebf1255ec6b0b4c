/**
 * A message larger than the scheduler's `maxMessageBytes` from a task's
 * client on a worker's pool thread, whose connection is bridged through the
 * worker's main thread (`comm/bridge.ts`): the client learned the limit when
 * it registered, so the submit fails at once with a `MessageTooLargeError`
 * naming it, and the task's client and the worker go on. So with one larger
 * than the worker's own `maxMessageBytes`, which the main thread's connection
 * applies to what it sends: the thread applies it first. (A client of the
 * process's own: `schedulerMessageLimit.test.ts`.)
 */

import { afterAll, describe, expect, it } from "vitest";
import type { Client } from "./client.ts";
import type { LocalCluster } from "./localCluster.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "./testCluster.ts";
import { inc } from "./testTasks.ts";
import { asksTooMuch, submitsTooMuch } from "./testThreadMessageLimitTasks.ts";

// At the end, not after each test: two tests share a cluster (below).
afterAll(closeTestClusters);

const MIB = 2 ** 20;
const LIMIT_TASKS = new URL("./testThreadMessageLimitTasks.ts", import.meta.url).href;

let workerLimited: Promise<{ cluster: LocalCluster; client: Client }> | null = null;

/**
 * The cluster of the tests of a worker's maxMessageBytes of 1 MiB, the
 * scheduler's 64 MiB: started once, as its pool thread loading the client's
 * modules costs some 3 s of CPU, and neither test leaves anything the other
 * sees (the same thread's client, two clients in all, in both).
 */
function workerLimitedCluster(): Promise<{ cluster: LocalCluster; client: Client }> {
  workerLimited ??= testCluster({
    workers: 1,
    executor: "threads",
    protocol: "tcp",
    taskModules: [CLIENT_TEST_TASKS, LIMIT_TASKS],
    scheduler: { maxMessageBytes: 64 * MIB },
    worker: { maxMessageBytes: MIB },
  });
  return workerLimited;
}

describe("a task's client on a pool thread, sending more than the scheduler's maxMessageBytes", () => {
  it("has the submit fail naming the scheduler's limit; the task's client and the worker go on", async () => {
    const { cluster, client } = await testCluster({
      workers: 1,
      executor: "threads",
      protocol: "tcp",
      taskModules: [CLIENT_TEST_TASKS, LIMIT_TASKS],
      scheduler: { maxMessageBytes: MIB },
    });
    const seen = await client.submit(submitsTooMuch, 5 * MIB);
    expect(seen.error).toMatch(
      /^MessageTooLargeError: cannot send a message of 5\.\d\d MiB \(\d+ bytes\): larger than the scheduler's --max-message-bytes \(1\.00 MiB\)$/,
    );
    expect(seen.limit).toBe(MIB);
    expect(seen.clientClosed).toBe(false);
    expect(seen.after).toBe(42);
    // The worker, and the thread's client, are still there: the same thread's client again.
    expect(cluster.workers[0]?.status).toBe("running");
    expect((await client.counters()).clients).toBe(2);
    expect((await client.submit(submitsTooMuch, 2 * MIB)).after).toBe(42);
    expect(await client.submit(inc, 1)).toBe(2);
  }, 60_000);

  it("over the worker's own maxMessageBytes (below the scheduler's): the submit fails naming it; the task's client and the worker go on", async () => {
    const { cluster, client } = await workerLimitedCluster();
    const seen = await client.submit(submitsTooMuch, 5 * MIB);
    // The worker's main thread would refuse it so (its own limit, not the scheduler's).
    expect(seen.error).toMatch(
      /^MessageTooLargeError: cannot send a message of \d\.\d\d MiB \(\d+ bytes\): larger than maxMessageBytes \(1\.00 MiB\)$/,
    );
    expect(seen.limit).toBe(MIB);
    expect(seen.clientClosed).toBe(false);
    expect(seen.after).toBe(42);
    expect(cluster.workers[0]?.status).toBe("running");
    expect((await client.counters()).clients).toBe(2);
    expect((await client.submit(submitsTooMuch, 2 * MIB)).after).toBe(42);
    expect(await client.submit(inc, 1)).toBe(2);
  }, 60_000);
});

describe("a task's client on a pool thread, asking the scheduler for more than it takes", () => {
  it("has the request rejected naming its limit (the worker's maxMessageBytes); the task's client and the worker go on", async () => {
    const { cluster, client } = await workerLimitedCluster();
    await client.setMetadata("big", "y".repeat(2 * MIB));
    await client.setMetadata("small", 1);
    const seen = await client.submit(asksTooMuch);
    // Its connection is bridged through the worker's, whose limit it said when it registered.
    expect(seen.error).toMatch(
      new RegExp(
        `^SchedulerReplyError: get-metadata: the scheduler cannot send its answer to client ${seen.clientId}: MessageTooLargeError: cannot send a message of 2\\.00 MiB \\(\\d+ bytes\\): larger than the maxMessageBytes of client ${seen.clientId} \\(1\\.00 MiB\\)$`,
      ),
    );
    expect(seen.clientClosed).toBe(false);
    expect(seen.after).toBe(1);
    expect(cluster.workers[0]?.status).toBe("running");
    expect((await client.counters()).clients).toBe(2);
    expect(await client.submit(inc, 1)).toBe(2);
  }, 60_000);
});
