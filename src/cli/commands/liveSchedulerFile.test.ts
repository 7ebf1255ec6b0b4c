import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { schedulerFileAddresses } from "./liveSchedulerFile.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-live-scheduler-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (file: string, address: string): void =>
  writeFileSync(file, JSON.stringify({ type: "Scheduler", address }));

describe("schedulerFileAddresses", () => {
  it("waits for the file without end, until aborted: the wait ends at once, with the reason", async () => {
    const stop = new AbortController();
    const next = schedulerFileAddresses(join(dir, "never.json"), {
      waitMs: Number.POSITIVE_INFINITY,
      signal: stop.signal,
    });
    const first = next().catch((e: unknown) => e);
    await sleep(300);
    const aborted = Date.now();
    const reason = new Error("stopped");
    stop.abort(reason);
    expect(await first).toBe(reason);
    expect(Date.now() - aborted).toBeLessThan(200);
  });

  it("once aborted, gives no address more, even with the file there", async () => {
    const file = join(dir, "there.json");
    write(file, "tcp://10.0.0.3:8786");
    const stop = new AbortController();
    const next = schedulerFileAddresses(file, { waitMs: 5_000, signal: stop.signal });
    expect(await next()).toBe("tcp://10.0.0.3:8786");
    const reason = new Error("stopped");
    stop.abort(reason);
    await expect(next()).rejects.toBe(reason);
  });

  it("gives the file's address, read again at each call; the last one while the file is gone", async () => {
    const file = join(dir, "moving.json");
    const next = schedulerFileAddresses(file, {
      waitMs: 5_000,
      signal: new AbortController().signal,
    });
    const first = next();
    await sleep(150);
    write(file, "tcp://10.0.0.1:8786");
    expect(await first).toBe("tcp://10.0.0.1:8786");
    write(file, "tcp://10.0.0.2:8786");
    expect(await next()).toBe("tcp://10.0.0.2:8786");
    rmSync(file);
    expect(await next()).toBe("tcp://10.0.0.2:8786");
    writeFileSync(file, "{ not json");
    await expect(next()).rejects.toThrow(/is not JSON/);
  });

  it("tells of a wait for a file not there yet, at once and then every so often, until it comes", async () => {
    const file = join(dir, "awaited.json");
    const told: number[] = [];
    const next = schedulerFileAddresses(file, {
      waitMs: 5_000,
      signal: new AbortController().signal,
      waiting: (waitedMs) => told.push(waitedMs),
      waitingEveryMs: 40,
    });
    const first = next();
    expect(told).toEqual([0]);
    await sleep(400); // ten ticks' worth: at least one, however loaded the machine
    write(file, "tcp://10.0.0.3:8786");
    expect(await first).toBe("tcp://10.0.0.3:8786");
    const heard = told.length;
    expect(heard).toBeGreaterThan(1);
    expect(told[1]).toBeGreaterThan(0);
    await sleep(120);
    expect(told).toHaveLength(heard); // no more once it came
    // A file there already is not waited for: nothing said.
    const quiet: number[] = [];
    const again = schedulerFileAddresses(file, {
      waitMs: 5_000,
      signal: new AbortController().signal,
      waiting: (waitedMs) => quiet.push(waitedMs),
    });
    expect(await again()).toBe("tcp://10.0.0.3:8786");
    expect(quiet).toEqual([]);
  });

  it("says how long it waited for a file that never came", async () => {
    const file = join(dir, "late.json");
    const next = schedulerFileAddresses(file, {
      waitMs: 200,
      signal: new AbortController().signal,
    });
    await expect(next()).rejects.toThrow(
      `no scheduler file at ${file} after 200 ms (is the scheduler started with --scheduler-file?)`,
    );
  });
});
