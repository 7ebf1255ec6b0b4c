/**
 * A result larger than the fetching client's `maxMessageBytes` (a client
 * tells no worker its own at registration): the
 * client says its limit in its `get_data`, so the worker refuses to send the
 * answer, with an error answer naming the sizes and the limit, and the client
 * rejects that result with a `ResultFetchError` saying so. Results fetched
 * beside it over the same connection arrive; a task's client on a pool thread,
 * whose connection is bridged through its worker (whose `maxMessageBytes`
 * applies), fails the same way once instead of fetching again and again.
 * The other way round, a `get_data` naming more keys than the worker reads
 * (it says its limit in its `identity`, asked first on each connection) fails
 * at the client, which asks for halves of the keys instead.
 */

import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Worker } from "../worker/worker.ts";
import { type Actor, ActorError } from "./actor.ts";
import { Client } from "./client.ts";
import { wait } from "./completion.ts";
import { ResultFetchError, RunError } from "./errors.ts";
import { CLIENT_TEST_TASKS } from "./testCluster.ts";
import { type ByteStore, byteStore, fetchesBytes } from "./testResultMessageLimitTasks.ts";
import { bytes, inc } from "./testTasks.ts";

const silent = pino({ level: "silent" });
const toClose: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  for (const x of toClose.splice(0).reverse()) await x.close();
});

const MIB = 2 ** 20;
const LIMIT_TASKS = new URL("./testResultMessageLimitTasks.ts", import.meta.url).href;

async function scheduler(): Promise<Scheduler> {
  const s = await Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: silent });
  toClose.push(s);
  return s;
}

async function worker(
  address: string,
  o: { maxMessageBytes?: number; executor?: "inline" | "threads" } = {},
): Promise<Worker> {
  const w = await Worker.create({
    scheduler: address,
    listen: "tcp://127.0.0.1:0",
    executor: o.executor ?? "inline",
    nthreads: 1,
    taskModules: [CLIENT_TEST_TASKS, LIMIT_TASKS],
    logger: silent,
    ...(o.maxMessageBytes !== undefined ? { maxMessageBytes: o.maxMessageBytes } : {}),
  });
  toClose.push(w);
  return w;
}

describe("a result over the fetching client's maxMessageBytes", () => {
  it("is refused by the worker: the result rejects naming the sizes and the limit; one fetched beside it arrives", async () => {
    const s = await scheduler();
    const w = await worker(s.address);
    const client = await Client.connect(s.address, { logger: silent, maxMessageBytes: MIB });
    toClose.push(client);
    const big = client.submit(bytes, 3 * MIB);
    const small = client.submit(bytes, 200_000);
    await wait([big, small]);
    // Two fetches in flight at once on the one connection to the worker.
    const bigResult = big.result().catch((e: unknown) => e);
    await new Promise((r) => setImmediate(r));
    const smallResult = small.result();
    const err = await bigResult;
    expect(err).toBeInstanceOf(ResultFetchError);
    expect((err as Error).message).toMatch(
      new RegExp(
        `^cannot fetch the result of ${big.key}: get_data on ${w.address} failed: MessageTooLargeError: cannot send a message of 3\\.00 MiB \\(\\d+ bytes\\): larger than the maxMessageBytes of ${client.id} \\(1\\.00 MiB\\)$`,
      ),
    );
    expect((await smallResult).length).toBe(200_000);
    // Refused once, not sent.
    expect(w.dataServer.outgoingCountTotal).toBe(2);
    // Both asked for in one turn (one get_data): the one that fits arrives, the other fails alone.
    const [smallAgain, bigAgain] = await Promise.allSettled([small.result(), big.result()]);
    expect(smallAgain.status === "fulfilled" && smallAgain.value.length).toBe(200_000);
    expect(bigAgain.status === "rejected" && bigAgain.reason).toBeInstanceOf(ResultFetchError);
  });

  it("a task's client on a pool thread: the worker's own limit applies; refused once, not fetched again and again", async () => {
    const s = await scheduler();
    const holder = await worker(s.address);
    const fetcher = await worker(s.address, { executor: "threads", maxMessageBytes: MIB });
    const client = await Client.connect(s.address, { logger: silent });
    toClose.push(client);
    const seen = await client.submitWith(
      { workers: [fetcher.address] },
      fetchesBytes,
      holder.address,
      3 * MIB,
    );
    expect(seen.length).toBeNull();
    expect(seen.error).toMatch(
      new RegExp(
        `^ResultFetchError: cannot fetch the result of bytes-\\w+: get_data on ${holder.address} failed: MessageTooLargeError: cannot send a message of 3\\.00 MiB \\(\\d+ bytes\\): larger than the maxMessageBytes of \\S+ \\(1\\.00 MiB\\)$`,
      ),
    );
    expect(holder.dataServer.outgoingCountTotal).toBe(1);
    expect(
      (await client.submitWith({ workers: [fetcher.address] }, fetchesBytes, holder.address, 1000))
        .length,
    ).toBe(1000);
  }, 60_000);
});

describe("a get_data naming more keys than the worker's maxMessageBytes", () => {
  it("goes in halves: 300 results of keys of 4 KiB arrive from a worker that reads 1 MiB, which never has to close a connection", async () => {
    const s = await scheduler();
    const warnings: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => warnings.push(line) });
    const w = await Worker.create({
      scheduler: s.address,
      listen: "tcp://127.0.0.1:0",
      executor: "inline",
      taskModules: [CLIENT_TEST_TASKS],
      maxMessageBytes: MIB,
      logger,
    });
    toClose.push(w);
    const client = await Client.connect(s.address, { logger: silent });
    toClose.push(client);
    const xs = Array.from({ length: 300 }, (_, i) =>
      client.submitWith({ key: `${"k".repeat(4096)}-${i}` }, inc, i),
    );
    await wait(xs);
    // All at once: one request of 1.2 MiB of names. Before, the worker closed the
    // connection on it, again each round, until the client gave up on the worker.
    expect(await client.gather(xs)).toEqual(xs.map((_, i) => i + 1));
    expect(warnings.filter((line) => line.includes("unreadable peer"))).toEqual([]);
    expect(w.status).toBe("running");
  });
});

describe("a run or actor answer over the calling client's maxMessageBytes", () => {
  it("run: refused by the worker with a RunError naming the sizes and the limit; the next run on the connection answers", async () => {
    const s = await scheduler();
    const w = await worker(s.address);
    const client = await Client.connect(s.address, { logger: silent, maxMessageBytes: MIB });
    toClose.push(client);
    const err = await client.run(bytes, 3 * MIB).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunError);
    expect((err as RunError).worker).toBe(w.address);
    expect((err as Error).message).toMatch(
      new RegExp(
        `^run on ${w.address} failed: MessageTooLargeError: cannot send a message of 3\\.00 MiB \\(\\d+ bytes\\): larger than the maxMessageBytes of ${client.id} \\(1\\.00 MiB\\)$`,
      ),
    );
    expect(((await client.run(bytes, 1000))[w.address] as Uint8Array).length).toBe(1000);
  });

  it("an actor's method and field: refused by the worker with an ActorError naming the sizes and the limit; the next call on the connection answers", async () => {
    const s = await scheduler();
    await worker(s.address);
    const client = await Client.connect(s.address, { logger: silent, maxMessageBytes: MIB });
    toClose.push(client);
    const handle = (await client
      .submitWith({ actor: true }, byteStore, 3 * MIB)
      .result()) as Actor<ByteStore>;
    const called = await handle.call("bytes", 3 * MIB).catch((e: unknown) => e);
    expect(called).toBeInstanceOf(ActorError);
    expect((called as Error).message).toMatch(
      new RegExp(
        `^actor ${handle.key}: MessageTooLargeError: cannot send a message of 3\\.00 MiB \\(\\d+ bytes\\): larger than the maxMessageBytes of ${client.id} \\(1\\.00 MiB\\)$`,
      ),
    );
    expect((await handle.call("bytes", 1000)).length).toBe(1000);
    const read = await handle.get("held").catch((e: unknown) => e);
    expect(read).toBeInstanceOf(ActorError);
    expect((read as Error).message).toMatch(
      /: MessageTooLargeError: cannot send a message of 3\.00 MiB .*larger than the maxMessageBytes of /,
    );
    expect((await handle.call("bytes", 200_000)).length).toBe(200_000);
  });
});
