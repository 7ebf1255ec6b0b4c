import { afterEach, describe, expect, it, vi } from "vitest";
import { Client } from "../../client/client.ts";
import { closeTestClusters, testCluster } from "../../client/testCluster.ts";
import { runWeft, testContext } from "../testContext.ts";
import { INTERRUPTED, unlessInterrupted } from "./interruptedRequest.ts";

afterEach(async () => {
  vi.restoreAllMocks();
  await closeTestClusters();
});

/** Send SIGINT once the command listens for it. */
async function ctrlCOnceListening(listeners: number): Promise<void> {
  while (process.listenerCount("SIGINT") === listeners) {
    await new Promise((r) => setTimeout(r, 10));
  }
  process.emit("SIGINT", "SIGINT");
}

const WORDS = { request: "the thing", beforeAsked: "nothing done", afterAsked: "it goes on" };

describe("a request interrupted by a signal", () => {
  it("says whether it had been asked, exit 130 for SIGINT", async () => {
    const listeners = process.listenerCount("SIGINT");
    const ctx = testContext();
    const before = unlessInterrupted("x", ctx, WORDS, () => new Promise(() => {}));
    await ctrlCOnceListening(listeners);
    expect(await before).toBe(INTERRUPTED);
    expect(ctx.stderr.text).toBe(
      "weft x: interrupted (SIGINT) before the thing was asked: nothing done\n",
    );
    expect(ctx.exitCode).toBe(130);
    expect(process.listenerCount("SIGINT")).toBe(listeners);
    const done = testContext();
    expect(await unlessInterrupted("x", done, WORDS, async () => 5)).toBe(5);
    expect(done.stderr.text).toBe("");
    expect(process.listenerCount("SIGINT")).toBe(listeners);
  });

  it("weft retire ended by Ctrl-C says the retirement goes on without it (exit 130)", async () => {
    const { cluster } = await testCluster({ workers: 2 });
    // A retirement that takes its time: the data of the workers retired moving elsewhere.
    vi.spyOn(Client.prototype, "retireWorkers").mockImplementation(() => new Promise(() => {}));
    const listeners = process.listenerCount("SIGINT");
    const retiring = runWeft(["retire", cluster.address, cluster.workers[0].address]);
    await ctrlCOnceListening(listeners);
    expect(await retiring).toEqual({
      code: 130,
      out: "",
      err: "weft retire: interrupted (SIGINT) after the retirement was asked: the scheduler goes on with it (the workers' results move to the others, then each closes)\n",
    });
  });
});
