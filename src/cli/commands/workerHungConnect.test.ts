import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TEST_TLS_FLAGS } from "../../comm/testTls.ts";
import { stoppedOnceDialled } from "../testWeftProcess.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-worker-hung-connect-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ARGS = ["--executor", "inline", "--nthreads", "1", ...TEST_TLS_FLAGS];

/**
 * Run `weft worker ...args(scheduler)` for a tls:// scheduler whose handshake never
 * completes, SIGTERM it once it dialled, and give what it ended with and how long
 * after the signal.
 */
function stoppedWhileDialling(args: (scheduler: string) => readonly string[]) {
  return stoppedOnceDialled((hostPort) => ["worker", ...args(`tls://${hostPort}`), ...ARGS]);
}

/** The records a weft process logged (JSON lines on stderr) at warn or above, and other lines. */
function alarming(stderr: string): string[] {
  return stderr
    .split("\n")
    .filter((line) => line !== "")
    .filter((line) => {
      try {
        return (JSON.parse(line) as { level: number }).level >= 40;
      } catch {
        return true;
      }
    });
}

// The try's timeout is 30 s (--connect-timeout's default, Dask's): before, the process
// lived that long after the signal, the close done but the TLS handshake still pending.
describe("weft worker stopped while its connection to the scheduler hangs", () => {
  it("exits 0 at once on SIGTERM, blaming nothing on the scheduler", async () => {
    const { outcome, tookMs } = await stoppedWhileDialling((s) => [s]);
    expect(tookMs).toBeLessThan(5_000);
    expect(outcome?.code).toBe(0);
    expect(alarming(outcome?.err ?? "")).toEqual([]);
    expect(outcome?.err).not.toMatch(/cannot|failed|timed out/);
  }, 30_000);

  // Its worker process exits a second after its close whatever it left running
  // (exitOnceClosed): the nanny's stop never waited out the try, and must not start to.
  it("with --nanny: the nanny and its worker exit 0 at once", async () => {
    const { outcome, tookMs } = await stoppedWhileDialling((s) => [s, "--nanny"]);
    expect(tookMs).toBeLessThan(5_000);
    expect(outcome?.code).toBe(0);
    expect(alarming(outcome?.err ?? "")).toEqual([]);
  }, 30_000);

  it("with --scheduler-file: exits 0 at once, where it waited out the try that looks for a live scheduler", async () => {
    const file = join(dir, "scheduler.json");
    const { outcome, tookMs } = await stoppedWhileDialling((address) => {
      writeFileSync(file, JSON.stringify({ type: "Scheduler", address }));
      return ["--scheduler-file", file];
    });
    expect(tookMs).toBeLessThan(5_000);
    expect(outcome?.code).toBe(0);
    expect(alarming(outcome?.err ?? "")).toEqual([]);
    expect(outcome?.err).not.toMatch(/cannot|failed|timed out/);
  }, 30_000);
});
