import { describe, expect, it } from "vitest";
import type { PeerPool } from "../worker/peerPool.ts";
import { Scatters, type ScattersHost } from "./scatterRegistration.ts";

/**
 * Scatters over a stand-in client whose scheduler never has a running worker:
 * a scatter keeps waiting for one (up to its own `timeoutMs`), placing its
 * values, until stopped. `stopWaitMs` bounds how long `stop` waits for it.
 */
function waitingScatters(stopWaitMs: number): Scatters {
  const unused = (what: string) => () => {
    throw new Error(`the stand-in client has no ${what}`);
  };
  const host = {
    id: "c",
    peers: {} as PeerPool,
    workers: async () => [],
    inProcess: false,
    timeoutMs: stopWaitMs,
    futureHost: {},
    requests: { ask: unused("requests"), stimulusId: unused("requests") },
    submissions: { last: 0 },
    record: unused("records"),
    checkOpen: () => {},
    closedError: () => null,
    send: unused("connection"),
  } as unknown as ScattersHost;
  return new Scatters(host);
}

describe("Scatters.stop", () => {
  it("stops a scatter still placing its values with the error given, and returns once it has", async () => {
    const scatters = waitingScatters(5_000);
    let outcome: unknown = "pending";
    const scattering = scatters.scatter([1], { timeoutMs: 60_000 }).catch((err: unknown) => {
      outcome = err;
    });
    expect(scatters.inProgress).toBe(true);

    const closed = new Error("the client closed");
    await scatters.stop(closed);

    // Neither left waiting for a worker for a minute, nor stop returning first.
    expect(outcome).toBe(closed);
    expect(scatters.inProgress).toBe(false);
    await scattering;
  });

  it("refuses a scatter started after it with the stop's error", async () => {
    const scatters = waitingScatters(5_000);
    const closed = new Error("the client closed");
    await scatters.stop(closed);
    await expect(scatters.scatter([1], { timeoutMs: 60_000 })).rejects.toBe(closed);
    expect(scatters.inProgress).toBe(false);
  });
});
