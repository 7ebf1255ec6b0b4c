/**
 * A worker fetching an input from a peer whose answer is larger than the
 * fetching worker's own `maxMessageBytes` (workers exchange no limits at
 * registration): the fetching worker says its limit in its `get_data`, so the
 * peer refuses to send the answer, with an error answer naming the sizes and
 * the limit. The fetch fails as a failure other than the network's (no
 * retrying from the same peer), the dependent task errs with that text, and
 * the connection between the workers stays up for other fetches. Before, the
 * whole value was sent for the fetching worker to close the connection on it.
 * Values that fit together but not with their keys' names (many long keys)
 * are fetched in several requests, each fitting both limits (the peer's said
 * in its `identity`).
 */

import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "../client/client.ts";
import { wait } from "../client/completion.ts";
import { CLIENT_TEST_TASKS } from "../client/testCluster.ts";
import { byteLengths } from "../client/testResultMessageLimitTasks.ts";
import { byteSum, bytes } from "../client/testTasks.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Worker } from "./worker.ts";

const silent = pino({ level: "silent" });
const toClose: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  for (const x of toClose.splice(0).reverse()) await x.close();
});

const MIB = 2 ** 20;
const LIMIT_TASKS = new URL("../client/testResultMessageLimitTasks.ts", import.meta.url).href;

async function worker(scheduler: string, maxMessageBytes?: number): Promise<Worker> {
  const w = await Worker.create({
    scheduler,
    listen: "tcp://127.0.0.1:0",
    executor: "inline",
    taskModules: [CLIENT_TEST_TASKS, LIMIT_TASKS],
    logger: silent,
    validate: true,
    ...(maxMessageBytes !== undefined ? { maxMessageBytes } : {}),
  });
  toClose.push(w);
  return w;
}

describe("a peer's answer over the fetching worker's maxMessageBytes", () => {
  it("is refused by the peer: the dependent errs naming the sizes and the limit, once, and the workers go on", async () => {
    const scheduler = await Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: silent });
    toClose.push(scheduler);
    const small = await worker(scheduler.address, MIB);
    const big = await worker(scheduler.address);
    const client = await Client.connect(scheduler.address, { logger: silent });
    toClose.push(client);

    const x = client.submitWith({ workers: [big.address] }, bytes, 3 * MIB);
    await wait([x]);
    const y = client.submitWith({ workers: [small.address] }, byteSum, x);
    const err = await y.catch((e: unknown) => e);
    expect((err as Error).message).toMatch(
      new RegExp(
        `failed: RemoteError: get_data on ${big.address} failed: MessageTooLargeError: cannot send a message of 3\\.00 MiB \\(\\d+ bytes\\): larger than the maxMessageBytes of ${small.address} \\(1\\.00 MiB\\) \\(while fetching its input ${x.key}\\)$`,
      ),
    );
    // Refused once, not sent again and again.
    expect(big.dataServer.outgoingCountTotal).toBe(1);
    const gathers = small.state.stimulusLog
      .toArray()
      .map((ev) => ev.cls)
      .filter((cls) => cls.startsWith("GatherDep"));
    expect(gathers).toEqual(["GatherDepFailureEvent"]);

    // The workers go on, and a value that fits still travels between them.
    const z = client.submitWith({ workers: [big.address] }, bytes, 1000);
    expect(await client.submitWith({ workers: [small.address] }, byteSum, z)).toBe(
      Array.from({ length: 1000 }, (_, i) => i % 251).reduce((a, b) => a + b, 0),
    );
    expect(small.status).toBe("running");
    expect(big.status).toBe("running");
  });

  it("inputs on one peer that fit its maxMessageBytes each but not together are fetched in several requests", async () => {
    const scheduler = await Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: silent });
    toClose.push(scheduler);
    const small = await worker(scheduler.address, MIB);
    const big = await worker(scheduler.address);
    const client = await Client.connect(scheduler.address, { logger: silent });
    toClose.push(client);
    const xs = [1, 2, 3].map((i) =>
      client.submitWith({ workers: [big.address] }, bytes, 400_000 + i),
    );
    await wait(xs);
    expect(await client.submitWith({ workers: [small.address] }, byteLengths, xs)).toEqual([
      400_001, 400_002, 400_003,
    ]);
    const gathers = small.state.stimulusLog
      .toArray()
      .filter((ev) => ev.cls.startsWith("GatherDep"))
      .map((ev) => ev.cls);
    expect(gathers).toEqual(["GatherDepSuccessEvent", "GatherDepSuccessEvent"]);
  });

  it("inputs whose names and values together pass the fetching worker's maxMessageBytes are fetched in parts: one gather, two requests", async () => {
    const scheduler = await Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: silent });
    toClose.push(scheduler);
    const a = await worker(scheduler.address);
    const b = await worker(scheduler.address, MIB);
    const client = await Client.connect(scheduler.address, { logger: silent });
    toClose.push(client);
    // 100 values of 9,000 bytes (900 kB, within the 1 MiB the state machine fetches at
    // once) named by keys of 2 KiB (205 kB more in the answer, which passes 1 MiB).
    const xs = Array.from({ length: 100 }, (_, i) =>
      client.submitWith({ key: `${"k".repeat(2048)}-${i}`, workers: [a.address] }, bytes, 9000),
    );
    await wait(xs);
    const lengths = await client.submitWith({ workers: [b.address] }, byteLengths, xs);
    expect(lengths).toEqual(xs.map(() => 9000));
    const gathers = b.state.stimulusLog
      .toArray()
      .filter((ev) => ev.cls.startsWith("GatherDep"))
      .map((ev) => ev.cls);
    // Before, the peer refused the answer: the task erred.
    expect(gathers).toEqual(["GatherDepSuccessEvent"]);
    expect(a.dataServer.outgoingCountTotal).toBe(2);
  });
});
