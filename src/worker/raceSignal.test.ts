import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { raceSignal } from "./raceSignal.ts";

describe("raceSignal", () => {
  it("stops listening to the signal once the promise settles either way", async () => {
    // The worker's close signal outlives every fetch and connection that races it.
    const ac = new AbortController();
    expect(await raceSignal(Promise.resolve(1), ac.signal)).toBe(1);
    const failed = new Error("failed");
    await expect(raceSignal(Promise.reject(failed), ac.signal)).rejects.toBe(failed);
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
  });

  it("rejects with the abort's reason, at once if the signal is aborted already", async () => {
    const never = new Promise<number>(() => {});
    const closed = new Error("closed");
    await expect(raceSignal(never, AbortSignal.abort(closed))).rejects.toBe(closed);
    const ac = new AbortController();
    const p = raceSignal(never, ac.signal);
    ac.abort(closed);
    await expect(p).rejects.toBe(closed);
  });
});
