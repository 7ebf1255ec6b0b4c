import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, vi } from "vitest";
import { refusingAddress, testContext } from "../testContext.ts";
import { main } from "../weft.ts";

/** Resolved with the lookup's abandon signal once the worker looked its --contact-address up. */
const { lookedUp, lookupCalled } = vi.hoisted(() => {
  let lookupCalled: (abandon: AbortSignal) => void = () => {};
  const lookedUp = new Promise<AbortSignal>((resolve) => {
    lookupCalled = resolve;
  });
  return { lookedUp, lookupCalled };
});

// A resolver that never answers (a DNS server gone silent): the worker's start waits for
// it up to 2 s.
vi.mock("./childLookup.ts", () => ({
  lookupInChild: (_host: string, abandon: AbortSignal) => {
    lookupCalled(abandon);
    return new Promise(() => {});
  },
}));

describe("weft worker --contact-address whose host name lookup never answers", () => {
  it("SIGTERM during the lookup closes it at once (exit 0, nothing said), not after the lookup's 2 s", async () => {
    const ctx = testContext();
    const args = ["--contact-address", "tcp://hung.example:4000", "--executor", "inline"];
    const worker = main(
      ["node", "weft", "worker", await refusingAddress(), ...args, "--log-level", "silent"],
      ctx,
    );
    const abandon = await lookedUp;
    const signalled = performance.now();
    process.emit("SIGTERM", "SIGTERM");
    const code = await Promise.race([worker, sleep(5_000, "still waiting")]);
    expect(code).toBe(0);
    // Before, 2 s: the stop waited for the lookup's bound.
    expect(performance.now() - signalled).toBeLessThan(1_500);
    // The lookup is stopped, not left to hold the process (its child killed).
    expect(abandon.aborted).toBe(true);
    expect(ctx.stderr.text).toBe("");
    expect(process.listenerCount("SIGTERM")).toBe(0);
    expect(process.listenerCount("SIGINT")).toBe(0);
  }, 30_000);
});
