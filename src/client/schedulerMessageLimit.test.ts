/**
 * A message larger than the scheduler's `maxMessageBytes`, from a client
 * whose own limit is higher: the client learned the scheduler's limit when it
 * registered, so the call that made the message fails at once with a
 * `MessageTooLargeError` naming the limit, and the connection goes on.
 */

import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { listen } from "../comm/connect.ts";
import { MessageTooLargeError } from "../comm/errors.ts";
import { wireVersion } from "../protocol/version.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Worker } from "../worker/worker.ts";
import { Client } from "./client.ts";
import { ClientClosedError } from "./errors.ts";
import { CLIENT_TEST_TASKS, closeTestClusters, testCluster } from "./testCluster.ts";
import { identity, inc } from "./testTasks.ts";

const silent = pino({ level: "silent" });
const toClose: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  for (const x of toClose.splice(0).reverse()) await x.close();
  await closeTestClusters();
});

const MIB = 2 ** 20;

describe("a message over the scheduler's maxMessageBytes", () => {
  it("fails the call that made it, naming the scheduler's limit; the client goes on", async () => {
    const { client } = await testCluster({
      protocol: "tcp",
      scheduler: { maxMessageBytes: MIB },
    });
    const before = client.submit(inc, 1);
    expect(await before).toBe(2);
    const big = client.submit(identity, "x".repeat(5 * MIB));
    const err = await big.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MessageTooLargeError);
    expect((err as Error).message).toMatch(
      /^cannot send a message of 5\.\d\d MiB \(\d+ bytes\): larger than the scheduler's --max-message-bytes \(1\.00 MiB\)$/,
    );
    expect((err as MessageTooLargeError).limit).toBe(MIB);
    expect(client.isClosed).toBe(false);
    expect(await before).toBe(2);
    expect(await client.submit(inc, 41)).toBe(42);
    // A request fails alone the same way.
    await expect(client.setMetadata("big", "y".repeat(2 * MIB))).rejects.toThrow(
      /^cannot send a message of 2\.\d\d MiB .*: larger than the scheduler's --max-message-bytes \(1\.00 MiB\)$/,
    );
    await client.setMetadata("small", 1);
    expect(await client.getMetadata("small")).toBe(1);
    // A request answered under its stimulus id too, rather than waiting forever.
    await expect(client.publishDataset("big", "y".repeat(2 * MIB))).rejects.toThrow(
      /the scheduler could not be told: cannot send a message of 2\.\d\d MiB .*: larger than the scheduler's --max-message-bytes \(1\.00 MiB\)$/,
    );
    expect(await client.listDatasets()).toEqual([]);
  });

  it("a task's error over it: the worker sends the error's start instead, and goes on", async () => {
    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      maxMessageBytes: MIB,
      logger: silent,
    });
    toClose.push(scheduler);
    const worker = await Worker.create({
      scheduler: scheduler.address,
      listen: "tcp://127.0.0.1:0",
      executor: "inline",
      taskModules: [CLIENT_TEST_TASKS],
      logger: silent,
    });
    toClose.push(worker);
    const client = await Client.connect(scheduler.address, { logger: silent });
    toClose.push(client);
    // A TaskError keeps its texts whole (an Error's are cut to 10,000 characters): its
    // task-erred is larger than the scheduler takes. Before, the worker closed on it.
    const failing = client.compute({ e: ["longTaskError", 2 * MIB] });
    const err = await failing.e.catch((e: unknown) => e);
    expect((err as Error).message).toMatch(
      /^task e failed: TaskError: the worker cannot send the error of task e to the scheduler \(cannot send a message of 2\.\d\d MiB \(\d+ bytes\): larger than the scheduler's --max-message-bytes \(1\.00 MiB\)\); it starts: ValueError: x{1980,}…$/,
    );
    expect(worker.status).toBe("running");
    expect(await client.submit(inc, 1)).toBe(2);
  });

  it("a scheduler that does not tell its limit (an older one): sent as before; the loss says what was sent", async () => {
    const listener = await listen(
      "tcp://127.0.0.1:0",
      (comm) => {
        void (async () => {
          await comm.recv();
          await comm.send({ op: "register-client-reply", status: "OK", ...wireVersion() });
          for await (const _ of comm) {
            // until the message over the limit closes it
          }
        })().catch(() => {});
      },
      { maxMessageBytes: 100_000 },
    );
    toClose.push(listener);
    const client = await Client.connect(listener.address, { logger: silent });
    toClose.push(client);
    const err = await client.submit(identity, "x".repeat(4 * MIB)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientClosedError);
    expect((err as Error).message).toMatch(
      /(ECONNRESET|EPIPE).* \(after a message of 4\.00 MiB was sent to it: larger than the peer's --max-message-bytes\? Its log says\)$/,
    );
  });
});
