/**
 * What the scheduler sends a client or a worker that takes less than the
 * scheduler does: each says its own `maxMessageBytes` when it registers, and
 * the scheduler refuses to send it more. A reply it cannot send (over either
 * limit, or not encodable) becomes an error reply to the same request, naming
 * the op, the sizes and whose limit; an answer by stimulus id becomes
 * `answer-unsent`; a task's error, one saying it could not be sent whole; a
 * `compute-task` fails its task. The connection stays up for what follows.
 * Before, the peer's reader closed the connection on the message (or the
 * client waited forever for a reply the scheduler dropped).
 */

import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "../client/client.ts";
import { DatasetError, RunError, SchedulerReplyError } from "../client/errors.ts";
import {
  CLIENT_TEST_TASKS,
  closeTestClusters,
  eventually,
  testCluster,
} from "../client/testCluster.ts";
import { bytes, identity, inc, longTaskError, uncloneable } from "../client/testTasks.ts";
import { Worker } from "../worker/worker.ts";
import { Scheduler } from "./scheduler.ts";

const silent = pino({ level: "silent" });
const toClose: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  for (const x of toClose.splice(0).reverse()) await x.close();
  await closeTestClusters();
});

const KIB = 2 ** 10;
const MIB = 2 ** 20;

/** A scheduler over TCP, `n` inline workers that take at most 1 MiB, and a client. */
async function workersTakingOneMib(
  n: number,
  o: { validate?: boolean } = {},
): Promise<{ scheduler: Scheduler; workers: Worker[]; client: Client }> {
  const scheduler = await Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: silent });
  toClose.push(scheduler);
  const workers = await Promise.all(
    Array.from({ length: n }, async () => {
      const w = await Worker.create({
        scheduler: scheduler.address,
        listen: "tcp://127.0.0.1:0",
        executor: "inline",
        taskModules: [CLIENT_TEST_TASKS],
        maxMessageBytes: MIB,
        logger: silent,
        ...(o.validate === true ? { validate: true } : {}),
      });
      toClose.push(w);
      return w;
    }),
  );
  const client = await Client.connect(scheduler.address, { logger: silent });
  toClose.push(client);
  return { scheduler, workers, client };
}

/** The error `p` rejects with (a failure if it resolves). */
async function rejection(p: PromiseLike<unknown>): Promise<Error> {
  const outcome = await p.then(
    (v) => ({ resolved: v }),
    (e: unknown) => ({ error: e }),
  );
  if (!("error" in outcome))
    throw new Error(`expected a rejection, got ${String(outcome.resolved)}`);
  expect(outcome.error).toBeInstanceOf(Error);
  return outcome.error as Error;
}

describe("an answer larger than the client's maxMessageBytes", () => {
  it("rejects the request, naming the op, the sizes and the client's limit; the client goes on", async () => {
    const { cluster, client } = await testCluster({ protocol: "tcp" });
    const small = await cluster.client({ maxMessageBytes: 256 * KIB });
    // The scheduler applied the limit the client said.
    await client.setMetadata("big", "y".repeat(MIB));
    await client.setMetadata("small", 1);
    const limit = `larger than the maxMessageBytes of client ${small.id} \\(256\\.00 kiB\\)`;

    const metadata = await rejection(small.getMetadata("big"));
    expect(metadata).toBeInstanceOf(SchedulerReplyError);
    expect(metadata.message).toMatch(
      new RegExp(
        `^get-metadata: the scheduler cannot send its answer to client ${small.id}: MessageTooLargeError: cannot send a message of 1\\.00 MiB \\(\\d+ bytes\\): ${limit}$`,
      ),
    );
    expect(small.isClosed).toBe(false);
    expect(await small.getMetadata("small")).toBe(1);

    const run = await rejection(small.runOnScheduler(bytes, 2 * MIB));
    expect(run).toBeInstanceOf(RunError);
    expect(run.message).toMatch(
      new RegExp(
        `^run on ${cluster.address} failed: run-on-scheduler: the scheduler cannot send its answer to client ${small.id}: MessageTooLargeError: cannot send a message of 2\\.00 MiB \\(\\d+ bytes\\): ${limit}$`,
      ),
    );
    expect(await small.runOnScheduler(bytes, 10)).toHaveLength(10);

    // A dump of a scheduler that knows many tasks, whose keys are long.
    const futures = Array.from({ length: 100 }, (_, i) =>
      client.submitWith({ key: `${"k".repeat(4 * KIB)}-${i}` }, inc, i),
    );
    await Promise.all(futures);
    // A name that could be written (one that could not is refused before the cluster is
    // asked): the answer's size fails the call first, so nothing is written.
    const dump = await rejection(small.dumpClusterState(join(tmpdir(), `weft-${small.id}`)));
    expect(dump.message).toMatch(
      new RegExp(
        `^dump-state: the scheduler cannot send its answer to client ${small.id}: MessageTooLargeError: cannot send a message of \\d+\\.\\d\\d [kM]iB \\(\\d+ bytes\\): ${limit}$`,
      ),
    );
    expect(small.isClosed).toBe(false);
    expect(await small.submit(inc, 41)).toBe(42);
    expect(await small.getMetadata("small")).toBe(1);
  }, 60_000);

  it("drops an event or a pub/sub message too large for a subscriber; the next ones come", async () => {
    const { cluster, client } = await testCluster({ workers: 1, protocol: "tcp" });
    const small = await cluster.client({ maxMessageBytes: 256 * KIB });
    const sub = await small.sub<string>("t");
    const events: string[] = [];
    await small.subscribeTopic("e", ([, msg]) => {
      events.push(msg as string);
    });
    const pub = client.pub<string>("t");
    pub.put("x".repeat(MIB));
    pub.put("small");
    await client.logEvent("e", "y".repeat(MIB));
    await client.logEvent("e", "tiny");
    expect(await sub.get({ timeoutMs: 5_000 })).toBe("small");
    await eventually(() => events.length > 0, 5_000, "the small event");
    expect(events).toEqual(["tiny"]);
    expect(sub.buffered).toBe(0);
    expect(small.isClosed).toBe(false);
    expect(await small.submit(inc, 1)).toBe(2);
  }, 30_000);

  it("fails getDataset (answered by stimulus id) and lets go of the dataset's keys", async () => {
    const { cluster, client } = await testCluster({ protocol: "tcp" });
    const small = await cluster.client({ maxMessageBytes: 256 * KIB });
    const x = client.submit(inc, 1);
    await x;
    await client.publishDataset("big", { x, pad: "z".repeat(MIB) });
    const err = await rejection(small.getDataset("big"));
    expect(err).toBeInstanceOf(DatasetError);
    expect(err.message).toMatch(
      new RegExp(
        `^getDataset: the scheduler cannot send its answer \\(dataset\\) to client ${small.id}: MessageTooLargeError: cannot send a message of 1\\.00 MiB \\(\\d+ bytes\\): larger than the maxMessageBytes of client ${small.id} \\(256\\.00 kiB\\)$`,
      ),
    );
    // The scheduler had the client want x: the client let go of it.
    await eventually(
      () => cluster.scheduler.state.clients.get(small.id)?.wantsWhat.size === 0,
      10_000,
      "the small client wants nothing",
    );
    await client.publishDataset("fits", { x });
    const got = (await small.getDataset("fits")) as { x: { result(): Promise<unknown> } };
    expect(await got.x.result()).toBe(2);
  }, 60_000);

  it("fails a future whose error is too large for the client, saying so with the error's start", async () => {
    const { cluster } = await testCluster({ protocol: "tcp" });
    const small = await cluster.client({ maxMessageBytes: 256 * KIB });
    const err = await rejection(small.submit(longTaskError, MIB));
    expect(err.message).toMatch(
      new RegExp(
        `^task longTaskError-\\w+ failed: TaskError: the scheduler cannot send the error of task longTaskError-\\w+ to client ${small.id} \\(MessageTooLargeError: cannot send a message of 1\\.\\d\\d MiB \\(\\d+ bytes\\): larger than the maxMessageBytes of client ${small.id} \\(256\\.00 kiB\\)\\); it starts: ValueError: x{1980,}…$`,
      ),
    );
    expect(await small.submit(inc, 1)).toBe(2);
  }, 60_000);
});

describe("an answer the scheduler cannot send at all", () => {
  it("over the scheduler's own limit, or not encodable: the request rejects saying so, instead of waiting", async () => {
    const { client } = await testCluster({
      protocol: "tcp",
      scheduler: { maxMessageBytes: MIB },
    });
    const big = await rejection(client.runOnScheduler(bytes, 2 * MIB));
    expect(big).toBeInstanceOf(RunError);
    expect(big.message).toMatch(
      /^run on \S+ failed: run-on-scheduler: the scheduler cannot send its answer to client \S+: MessageTooLargeError: cannot send a message of 2\.00 MiB \(\d+ bytes\): larger than the scheduler's --max-message-bytes \(1\.00 MiB\)$/,
    );
    const odd = await rejection(client.runOnScheduler(uncloneable));
    expect(odd.message).toMatch(
      /^run on \S+ failed: run-on-scheduler: the scheduler cannot send its answer to client \S+: SerializationError: /,
    );
    expect(await client.runOnScheduler(inc, 1)).toBe(2);
  }, 60_000);
});

describe("a compute-task larger than the worker's maxMessageBytes", () => {
  it("fails the task, naming the worker's limit; the worker stays connected", async () => {
    const {
      scheduler,
      workers: [worker],
      client,
    } = await workersTakingOneMib(1, { validate: true });
    const err = await rejection(client.submit(identity, "x".repeat(2 * MIB)));
    expect(err.message).toMatch(
      new RegExp(
        `^task identity-\\w+ failed: the scheduler could not send the task to ${worker.address}: MessageTooLargeError: cannot send a message of 2\\.00 MiB \\(\\d+ bytes\\): larger than the maxMessageBytes of worker ${worker.address} \\(1\\.00 MiB\\)$`,
      ),
    );
    expect(worker.status).toBe("running");
    expect(scheduler.state.workers.has(worker.address)).toBe(true);
    expect(await client.submit(inc, 1)).toBe(2);
  }, 60_000);
});

describe("a message of many keys larger than the worker's maxMessageBytes", () => {
  it("goes in halves that fit: a replicate of many long keys completes", async () => {
    const { workers, client } = await workersTakingOneMib(2);
    const [a, b] = workers.map((w) => w.address);
    // 300 keys of 4 KiB: an acquire-replicas naming them all (twice: who has each, its size)
    // is over 2 MiB, four times what fits in halves of halves.
    const futures = Array.from({ length: 300 }, (_, i) =>
      client.submitWith({ key: `${"k".repeat(4 * KIB)}-${i}`, workers: [a] }, inc, i),
    );
    await client.gather(futures);
    const replicated = client.replicate(futures, { n: 2 });
    const outcome = await Promise.race([
      replicated.then(() => "replicated"),
      new Promise((r) => setTimeout(() => r("still waiting after 30 s"), 30_000)),
    ]);
    expect(outcome).toBe("replicated");
    const held = await client.whoHas(futures);
    expect(Object.values(held).every((h) => [...h].sort().join() === [a, b].sort().join())).toBe(
      true,
    );
  }, 60_000);
});
