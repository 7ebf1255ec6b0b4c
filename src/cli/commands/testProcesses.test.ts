import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { alive, running, writtenPid } from "./testProcesses.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-test-processes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("testProcesses", () => {
  it("refuses 0 and negative ids, which name process groups: the test's own group is alive for good", () => {
    // Before, alive(0) and running(0) were true for as long as the test ran.
    expect(() => alive(0)).toThrow(RangeError);
    expect(() => running(0)).toThrow(RangeError);
    expect(() => running(-process.pid)).toThrow(RangeError);
    expect(() => running(Number.NaN)).toThrow(RangeError);
    expect(running(process.pid)).toBe(true);
  });

  it("writtenPid waits for the whole line, not for the file: one opened and not written yet is empty", async () => {
    const file = join(dir, "opened.pid");
    writeFileSync(file, "");
    const pid = writtenPid(file, 10_000, "the pid");
    await sleep(50);
    writeFileSync(file, "12");
    await sleep(50);
    writeFileSync(file, "12345\n");
    // Before, a test read the empty file as soon as it existed: pid 0.
    expect(await pid).toBe(12345);
  });

  it("writtenPid says which file was never written", async () => {
    await expect(writtenPid(join(dir, "never.pid"), 20, "the task's start")).rejects.toThrow(
      /the task's start not written to .*never\.pid within 20 ms/,
    );
  });
});
