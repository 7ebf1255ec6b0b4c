/**
 * `weft run` on a running scheduler: what it says while it waits for the scheduler file, or
 * for the scheduler (finding the scheduler through the file: schedulerFile.test.ts).
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it, vi } from "vitest";
import { refusingAddress, testContext } from "../testContext.ts";
import { main } from "../weft.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-run-scheduler-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const graph = join(dir, "g.json");
writeFileSync(graph, JSON.stringify({ graph: { a: 1 } }));

it("says at once on stderr that it waits for the scheduler file, and for how long, as weft status does", async () => {
  const file = join(dir, "later.json");
  const ctx = testContext();
  const running = main(
    ["node", "weft", "run", graph, "--scheduler-file", file, "--connect-timeout", "1500"],
    ctx,
  );
  const waiting = `weft run: waiting for the scheduler file ${file} (not there yet); giving up after 1.5 s\n`;
  // Said before the wait starts, but only once the command's modules are loaded: on a
  // loaded host that took more than a fixed 300 ms.
  await vi.waitFor(() => expect(ctx.stderr.text).not.toBe(""), { timeout: 10_000, interval: 20 });
  expect(ctx.stderr.text).toBe(waiting);
  // The file comes (naming a scheduler gone, to end quickly): nothing more said of the file.
  writeFileSync(file, JSON.stringify({ type: "Scheduler", address: await refusingAddress() }));
  expect(await running).toBe(2);
  expect(ctx.stderr.text.startsWith(waiting)).toBe(true);
  expect(ctx.stderr.text.split("waiting for the scheduler file").length).toBe(2); // said once

  // None in time: the wait said, then why it ended.
  const missing = join(dir, "never.json");
  const late = testContext();
  expect(
    await main(
      ["node", "weft", "run", graph, "--scheduler-file", missing, "--connect-timeout", "300ms"],
      late,
    ),
  ).toBe(2);
  expect(late.stderr.text).toBe(
    `weft run: waiting for the scheduler file ${missing} (not there yet); giving up after 0.3 s\n` +
      `weft run: no scheduler file at ${missing} after 300 ms (is the scheduler started with --scheduler-file?)\n`,
  );
}, 30_000);

it("says at once on stderr that it waits for a scheduler that refuses connections, then why it gave up", async () => {
  const address = await refusingAddress();
  const ctx = testContext();
  expect(
    await main(
      ["node", "weft", "run", graph, "--scheduler", address, "--connect-timeout", "600ms"],
      ctx,
    ),
  ).toBe(2);
  const lines = ctx.stderr.text.split("\n");
  expect(lines[0]).toMatch(
    new RegExp(
      `^weft run: waiting for the scheduler at ${address} \\(.*refused.*\\); giving up after 0\\.6 s$`,
    ),
  );
  expect(ctx.stderr.text.split("waiting for the scheduler at").length).toBe(2); // said once
  expect(lines[1]).toMatch(/^weft run: /);
}, 30_000);

it("says a mistake in the other options or in the graph at once, not after waiting for the scheduler file", async () => {
  // They were checked once the file was read: a file not there yet meant a wait of
  // --connect-timeout (30 s by default), then "no scheduler file", the mistake unsaid.
  const missing = join(dir, "not-yet.json");
  const cases: [string[], string][] = [
    [["--workers", "3"], "--workers applies to the embedded cluster only"],
    [
      ["--connect-timeout", "0"],
      "--connect-timeout must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h, got 0",
    ],
    [["--task-stream", join(dir, "no", "such", "dir.json")], "--task-stream"],
    [["--scheduler", "tcp://127.0.0.1:1"], "give --scheduler or --scheduler-file, not both"],
  ];
  for (const [more, said] of cases) {
    const ctx = testContext();
    const started = Date.now();
    expect(
      await main(["node", "weft", "run", graph, "--scheduler-file", missing, ...more], ctx),
    ).toBe(2);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(ctx.stderr.text).toMatch(new RegExp(`^weft run: [^\\n]*${escaped(said)}[^\\n]*\\n$`));
  }
  const noGraph = testContext();
  const absent = join(dir, "absent.json");
  expect(await main(["node", "weft", "run", absent, "--scheduler-file", missing], noGraph)).toBe(2);
  expect(noGraph.stderr.text).toMatch(
    new RegExp(`^weft run: [^\\n]*${escaped(absent)}[^\\n]*\\n$`),
  );
}, 30_000);

/** `text` as a regular expression matching it literally. */
function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
