import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { freePort } from "../cli/commands/contactAddress.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { Client } from "./client.ts";

describe("Client.connect to a scheduler not listening yet", () => {
  it("waits for it (started together with the client), within timeoutMs, as Dask's client", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const lines: string[] = [];
    const logger = pino(
      { level: "info" },
      { write: (line: string) => void lines.push(JSON.parse(line).msg) },
    );
    const connecting = Client.connect(address, { timeoutMs: 10_000, logger });
    await sleep(300);
    const scheduler = await Scheduler.start({ listen: address, logger: pino({ level: "silent" }) });
    try {
      const client = await connecting;
      await client.setMetadata("a", 1); // a round trip: the scheduler answers it
      expect(await client.getMetadata("a")).toBe(1);
      await client.close();
      expect(lines).toContain("the scheduler refuses connections (not started yet?): trying again");
    } finally {
      await scheduler.close();
    }
  });

  it("fails once timeoutMs is over, saying how long it was refused", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    await expect(
      Client.connect(address, { timeoutMs: 300, logger: pino({ level: "silent" }) }),
    ).rejects.toThrow(/still refused after 300 ms/);
  });
});
