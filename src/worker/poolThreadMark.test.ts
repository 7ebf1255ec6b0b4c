import pino from "pino";
import { describe, expect, it } from "vitest";
import { LocalCluster } from "../client/localCluster.ts";

const STARTS_CLUSTER = new URL("./testStartsCluster.ts", import.meta.url).href;
const NESTED_CLUSTER = new URL("./testNestedCluster.ts", import.meta.url).href;

describe("a cluster started on a pool thread", () => {
  it("is refused, so a program whose own module is a task module fails once, saying why", async () => {
    const started = LocalCluster.start({
      workers: 1,
      threadsPerWorker: 1,
      taskModules: [STARTS_CLUSTER],
      logger: pino({ level: "silent" }),
    });
    await expect(started).rejects.toThrow(
      /LocalCluster\.start was called on a pool thread of a worker.*taskModules: \[import\.meta\.url\]/,
    );
  });

  it("is let start from a running task's own code, as Dask lets a task start a LocalCluster", async () => {
    // Refused before, as at an import: a task could not start a nested cluster at all.
    const { nestedAsync, nestedPlain } = await import("./testNestedCluster.ts");
    const cluster = await LocalCluster.start({
      workers: 1,
      threadsPerWorker: 2,
      taskModules: [NESTED_CLUSTER],
      logger: pino({ level: "silent" }),
    });
    try {
      const client = await cluster.client();
      // The plain function's cluster starts its worker after its synchronous call ended.
      expect(
        await client.gather([client.submit(nestedAsync, 2), client.submit(nestedPlain, 3)]),
      ).toEqual([8, 27]);
    } finally {
      await cluster.close();
    }
  }, 60_000);
});
