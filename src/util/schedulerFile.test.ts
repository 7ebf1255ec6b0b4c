import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readSchedulerFile, removeSchedulerFile, writeSchedulerFile } from "./schedulerFile.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-scheduler-file-unit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const content = (id: string, address: string) =>
  ({ type: "Scheduler", id, address, services: {}, started: 0, workers: {} }) as const;

describe("scheduler files", () => {
  it("are replaced whole, and removed only by the scheduler they name", async () => {
    const file = join(dir, "s.json");
    await writeSchedulerFile(file, content("Scheduler-a", "tcp://10.0.0.1:8786"));
    expect(await readSchedulerFile(file)).toBe("tcp://10.0.0.1:8786");
    // A second scheduler writes its own over it: the first, closing, leaves it.
    await writeSchedulerFile(file, content("Scheduler-b", "tcp://10.0.0.2:8786"));
    await removeSchedulerFile(file, "Scheduler-a");
    expect(await readSchedulerFile(file)).toBe("tcp://10.0.0.2:8786");
    await removeSchedulerFile(file, "Scheduler-b");
    expect(existsSync(file)).toBe(false);
    await removeSchedulerFile(file, "Scheduler-b"); // gone already: nothing to do
  });

  it("a reader waits for the file, and refuses a bad path", async () => {
    const file = join(dir, "later.json");
    const reading = readSchedulerFile(file, { timeoutMs: 5_000, pollMs: 10 });
    await new Promise((r) => setTimeout(r, 50));
    await writeSchedulerFile(file, content("Scheduler-c", "tls://h:1"));
    expect(await reading).toBe("tls://h:1");
    await expect(readSchedulerFile("")).rejects.toThrow(
      "readSchedulerFile: the path must be a non-empty string",
    );
    await expect(readSchedulerFile(dir)).rejects.toThrow(/cannot read the scheduler file .*EISDIR/);
  });
});
