import pino from "pino";
import { describe, expect, it } from "vitest";
import { LocalCluster } from "../client/localCluster.ts";

const STARTS_CLUSTER = new URL("./testStartsCluster.ts", import.meta.url).href;

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
});
