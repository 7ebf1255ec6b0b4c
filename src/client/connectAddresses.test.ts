/** `Client.connect` given a function: the address to dial, asked for again before each try. */

import { pino } from "pino";
import { expect, it } from "vitest";
import { refusingAddress } from "../cli/testContext.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Client } from "./client.ts";

const silent = pino({ level: "silent" });

it("asks for the address before each try, until one accepts; the client has that one", async () => {
  const s = await Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: silent });
  try {
    const gone = await refusingAddress();
    const asked: string[] = [];
    const waits: { address: string; reason: string }[] = [];
    const c = await Client.connect(
      async () => {
        // A scheduler file that named one gone, then the one started again.
        const next = asked.length < 2 ? gone : s.address;
        asked.push(next);
        return next;
      },
      {
        logger: silent,
        timeoutMs: 10_000,
        onWaiting: ({ address, reason }) => waits.push({ address, reason }),
      },
    );
    expect(asked).toEqual([gone, gone, s.address]);
    expect(waits).toEqual([{ address: gone, reason: "refused" }]);
    expect(c.address).toBe(s.address);
    // Registered: the scheduler answers it.
    expect(await c.listDatasets()).toEqual([]);
    await c.close();
  } finally {
    await s.close();
  }
});

it("a bad address given is a TypeError, and a rejection of the function ends the wait with it", async () => {
  await expect(Client.connect(async () => "nowhere", { logger: silent })).rejects.toThrow(
    TypeError,
  );
  await expect(
    Client.connect(async () => 5 as unknown as string, { logger: silent }),
  ).rejects.toThrow(
    "Client.connect: the address must be a non-empty string (tcp://host:port, …), got 5",
  );
  const gone = await refusingAddress();
  let calls = 0;
  const why = new Error("the scheduler file is gone");
  await expect(
    Client.connect(
      async () => {
        if (++calls > 1) throw why;
        return gone;
      },
      { logger: silent, timeoutMs: 10_000 },
    ),
  ).rejects.toBe(why);
  expect(calls).toBe(2);
});
