import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { refusingAddress, testContext } from "../testContext.ts";
import { main } from "../weft.ts";

describe("weft worker and signals", () => {
  it("SIGTERM while it waits for its scheduler closes it as when running: exit 0, nothing said", async () => {
    const ctx = testContext();
    const args = ["--executor", "inline", "--nthreads", "1", "--log-level", "silent"];
    const worker = main(
      ["node", "weft", "worker", await refusingAddress(), ...args, "--connect-timeout", "20000"],
      ctx,
    );
    await sleep(1_000); // started, and asking the scheduler again and again
    const signalled = Date.now();
    process.emit("SIGTERM", "SIGTERM");
    const code = await Promise.race([worker, sleep(5_000, "still waiting")]);
    expect(code).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(3_000);
    expect(ctx.stderr.text).toBe("");
    expect(process.listenerCount("SIGTERM")).toBe(0);
    expect(process.listenerCount("SIGINT")).toBe(0);
  }, 30_000);
});
