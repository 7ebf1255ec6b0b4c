import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

/**
 * A program whose only pending work is coordination waits with a timeout, on an
 * in-process cluster: the scheduler's timers do not keep the process alive.
 */
const PROGRAM = `
import { LocalCluster } from ${JSON.stringify(new URL("./index.ts", import.meta.url).href)};
const cluster = await LocalCluster.start({ workers: 1, executor: "inline" });
const client = await cluster.client();
console.log("event", await client.event("e").wait({ timeoutMs: 30 }));
const held = client.lock("l");
await held.acquire();
console.log("lock", await client.lock("l").acquire({ timeoutMs: 30 }));
const q = client.queue("q", { maxsize: 1 });
await q.put(1);
console.log("queue", await q.put(2, { timeoutMs: 30 }).catch((e) => e.name));
await cluster.close();
console.log("done");
`;

describe("a coordination wait with a timeout, in one process", () => {
  it("keeps the program alive until the scheduler answers it, instead of exiting with the await unsettled", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-due-"));
    try {
      const file = join(dir, "program.mts");
      writeFileSync(file, PROGRAM);
      const { stdout } = await run(process.execPath, ["--import", "tsx", file], {
        cwd: new URL("../..", import.meta.url).pathname,
        timeout: 60_000,
      });
      expect(stdout.trim().split("\n")).toEqual([
        "event false",
        "lock false",
        "queue CoordinationTimeoutError",
        "done",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
