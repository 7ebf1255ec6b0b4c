/**
 * A value a client scatters over TCP that the worker cannot read (its bytes
 * do not deserialize there): the worker answers the `update_data` with the
 * error, and the scatter fails at once saying so, rather than the worker
 * closing the connection and the client waiting for it as if unreachable.
 */

import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Worker } from "../worker/worker.ts";
import { Client } from "./client.ts";
import { ScatterError } from "./errors.ts";

/** A value whose bytes the sending side cuts short, so that no receiver can read them. */
const UNREADABLE = "unreadable on arrival";

vi.mock("../comm/clonedBytes.ts", async (original) => {
  const actual = await original<typeof import("../comm/clonedBytes.ts")>();
  return {
    ...actual,
    clonedBytes(value: unknown) {
      const out = actual.clonedBytes(value);
      const marked = (value as { mark?: unknown } | null)?.mark === UNREADABLE;
      return marked ? { ...out, bytes: out.bytes.subarray(0, out.bytes.length - 3) } : out;
    },
  };
});

const silent = pino({ level: "silent" });
const toClose: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const x of toClose.splice(0).reverse()) await x.close();
});

describe("scatter over TCP", () => {
  it("fails at once, naming the cause, when the worker cannot read a value; the connection serves on", async () => {
    const scheduler = await Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: silent });
    toClose.push(scheduler);
    const worker = await Worker.create({
      scheduler: scheduler.address,
      listen: "tcp://127.0.0.1:0",
      nthreads: 1,
      executor: "inline",
      logger: silent,
    });
    toClose.push(worker);
    const client = await Client.connect(scheduler.address, { logger: silent });
    toClose.push(client);
    const err = await client
      .scatter([{ mark: UNREADABLE, n: [1, 2, 3] }], { timeoutMs: 5_000 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScatterError);
    expect((err as Error).message).toMatch(
      /update_data: a value in the request cannot be read: Unable to deserialize cloned data/,
    );
    expect((err as Error).message).not.toMatch(/unreachable|within/);
    const [f] = await client.scatter([{ n: 4 }]);
    expect(await f).toEqual({ n: 4 });
  });
});
