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

  it("asks an address function before each try: a refused address gives way to the one it says next", async () => {
    const gone = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const live = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const accepted: Comm[] = [];
    const listener = await listen(live, (c) => accepted.push(c));
    const asked: string[] = [];
    const refused: string[] = [];
    try {
      const comm = await connectWaiting(
        async () => {
          // The first answer is a stale one (a scheduler gone); then the file was written again.
          const next = asked.length === 0 ? gone : live;
          asked.push(next);
          return next;
        },
        { timeoutMs: 10_000, onFirstRefusal: (a) => refused.push(a) },
      );
      expect(comm.peerAddress).toBe(live);
      expect(asked).toEqual([gone, live]);
      expect(refused).toEqual([gone]);
      await comm.close();
    } finally {
      for (const c of accepted) c.abort();
      await listener.close();
    }
  });

  it("waits without end with waitMs Infinity, saying every stillRefusedEveryMs that it still waits, until stopped", async () => {
    const address = `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
    const reports: [string, number][] = [];
    let stop = false;
    const started = Date.now();
    const dialling = connectWaiting(address, {
      timeoutMs: 100, // each try's: not the wait's
      waitMs: Number.POSITIVE_INFINITY,
      stillRefusedEveryMs: 300,
      onStillRefused: (a, waited) => reports.push([a, waited]),
      stopped: () => stop,
    }).catch((e: unknown) => e);
    await sleep(1_200);
    stop = true;
    const err = await dialling;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_200);
    expect((err as ConnectError).code).toBe("ECONNREFUSED");
    expect(reports.length).toBeGreaterThanOrEqual(2);
    expect(reports.length).toBeLessThanOrEqual(4);
    expect(reports[0][0]).toBe(address);
    expect(reports[0][1]).toBeGreaterThanOrEqual(300);
  });

  it("fails at once when the address function fails", async () => {
    await expect(
      connectWaiting(() => Promise.reject(new Error("no scheduler file")), { timeoutMs: 60_000 }),
    ).rejects.toThrow("no scheduler file");
  });
});
