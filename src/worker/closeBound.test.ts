import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeScheduler } from "./testScheduler.ts";
import { memoryLogger, testWorker } from "./testWorker.ts";

let sched: FakeScheduler;
const dir = mkdtempSync(join(tmpdir(), "weft-close-bound-"));
beforeEach(async () => {
  sched = await FakeScheduler.start();
});
afterEach(() => sched.close());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const never = () => new Promise(() => {});

describe("Worker.close(timeout) does not wait for good on plugins' and preloads' teardowns", () => {
  it("a plugin teardown, a plugin setup and a preload's weftTeardown that never end are waited on up to the timeout each, named at warn", async () => {
    const preload = join(dir, "stuck.mjs");
    writeFileSync(preload, "export function weftTeardown() { return new Promise(() => {}); }\n");
    const { logger, records } = memoryLogger();
    const w = await testWorker(sched.address, { logger, preload: [preload] });
    const log: string[] = [];
    await w.addPlugin({ teardown: never }, "stuck");
    await w.addPlugin({ teardown: () => log.push("after torn down") }, "after");
    void w.addPlugin({ setup: never, teardown: () => log.push("pending torn down") }, "pending");
    await new Promise((r) => setTimeout(r, 20)); // its setup begun
    const t0 = Date.now();
    // Before, close() never resolved: LocalCluster.close and a weft worker's SIGTERM hung too.
    await w.close(0.2);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(w.status).toBe("closed");
    expect(log).toEqual(["after torn down", "pending torn down"]);
    const warned = records
      .filter((r) => r.level === 40)
      .map((r) => `${String(r.plugin ?? r.preload)}: ${String(r.msg)}`);
    expect(warned).toEqual([
      "pending: worker plugin setup did not finish within the close's timeout (0.2 s): no longer waited on",
      "stuck: worker plugin teardown did not finish within the close's timeout (0.2 s): no longer waited on",
      `file://${preload}: a preload module's weftTeardown did not finish within the close's timeout: no longer waited on`,
    ]);
  });
});

describe("Worker.close(timeout)'s timeout", () => {
  it("is refused when not a number of seconds ≥ 0, as LocalCluster.close's, closing nothing; Infinity is one", async () => {
    const w = await testWorker(sched.address);
    // Before, each closed the worker at once, as a timeout of 0.
    for (const bad of [-1, Number.NaN, "5", null]) {
      await expect(w.close(bad as number)).rejects.toThrow(
        /^Worker.close: timeout must be a number of seconds ≥ 0, got /,
      );
    }
    expect(w.status).toBe("running");
    await w.close(Number.POSITIVE_INFINITY);
    expect(w.status).toBe("closed");
  });
});
