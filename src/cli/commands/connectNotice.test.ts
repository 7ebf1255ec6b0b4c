import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { muteServer } from "../../comm/testMuteServer.ts";
import { TEST_TLS_FLAGS } from "../../comm/testTls.ts";
import { refusingAddress, testContext } from "../testContext.ts";
import { main } from "../weft.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-connect-notice-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const graph = join(dir, "g.json");
writeFileSync(graph, JSON.stringify({ graph: { a: 1 } }));

/** The stderr of `weft ...args` (ending with exit 2) for a scheduler that never makes the TLS handshake. */
async function unanswered(args: (scheduler: string) => string[]): Promise<string[]> {
  const mute = await muteServer();
  try {
    const ctx = testContext();
    const scheduler = `tls://${mute.hostPort}`;
    const code = await main(["node", "weft", ...args(scheduler), ...TEST_TLS_FLAGS], ctx);
    expect(code).toBe(2);
    return ctx.stderr.text.split("\n").map((line) => line.replace(scheduler, "SCHEDULER"));
  } finally {
    await mute.close();
  }
}

// Before, each said nothing until --connect-timeout was over (30 s for weft run).
describe("commands connecting to a scheduler that does not answer say so after 2 s", () => {
  it("weft status", async () => {
    const lines = await unanswered((s) => ["status", s, "--connect-timeout", "3s"]);
    expect(lines[0]).toBe(
      "weft status: waiting for the scheduler at SCHEDULER (no answer for 2 s); giving up after 3 s",
    );
    // The try's timeout is what is left of the 3 s when it begins: 2999 ms now and then.
    expect(lines[1]).toMatch(
      /^weft status: timed out connecting to SCHEDULER after (2\d{3}|3000) ms/,
    );
    expect(lines.slice(2)).toEqual([""]);
  }, 30_000);

  it("weft run --scheduler", async () => {
    const lines = await unanswered((s) => [
      "run",
      graph,
      "--scheduler",
      s,
      "--connect-timeout",
      "3s",
    ]);
    expect(lines[0]).toBe(
      "weft run: waiting for the scheduler at SCHEDULER (no answer for 2 s); giving up after 3 s",
    );
    expect(lines[1]).toMatch(/^weft run: timed out connecting to SCHEDULER after (2\d{3}|3000) ms/);
    // A first try begun in time: not said to have come after the wait (it was, at 2999 ms).
    expect(lines[1]).not.toContain("first try");
  }, 30_000);

  it("not said again after a refusal was said at once", async () => {
    const ctx = testContext();
    const address = await refusingAddress();
    expect(await main(["node", "weft", "status", address, "--connect-timeout", "3s"], ctx)).toBe(2);
    expect(ctx.stderr.text).not.toContain("no answer");
    expect(ctx.stderr.text).toContain("(refused)");
  }, 30_000);
});
