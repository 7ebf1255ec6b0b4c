import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { freePort } from "../cli/commands/contactAddress.ts";
import type { Comm } from "./comm.ts";
import { listen } from "./connect.ts";
import { connectWaiting } from "./connectWaiting.ts";
import { ConnectError } from "./errors.ts";

describe("connectWaiting", () => {
  it("waits for a server that starts listening after the first refusal, saying so once", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    let refusals = 0;
    const accepted: Comm[] = [];
    const dialling = connectWaiting(address, {
      timeoutMs: 10_000,
      onFirstRefusal: () => refusals++,
    });
    await sleep(400); // refused a few times by now
    const listener = await listen(address, (c) => accepted.push(c));
    try {
      const comm = await dialling;
      expect(refusals).toBe(1);
      await comm.close();
    } finally {
      for (const c of accepted) c.abort();
      await listener.close();
    }
  });

  it("fails with the refusal once the time is over, saying how long it tried", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const started = Date.now();
    const err = await connectWaiting(address, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe("ECONNREFUSED");
    expect((err as Error).message).toMatch(/still refused after 300 ms$/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it("stops at once when its caller is closing, and does not wait on other failures", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const err = await connectWaiting(address, { timeoutMs: 60_000, stopped: () => true }).catch(
      (e: unknown) => e,
    );
    expect((err as ConnectError).code).toBe("ECONNREFUSED");
    await expect(
      connectWaiting("tcp://no-such-host.invalid:1", { timeoutMs: 60_000 }),
    ).rejects.toThrow();
  });
});
