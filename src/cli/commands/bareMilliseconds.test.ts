import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runWeft } from "../testContext.ts";
import { bareMillisecondsWarning } from "./bareMilliseconds.ts";

const WEFT_BIN = fileURLToPath(new URL("../../../bin/weft.js", import.meta.url));
const WORKER = ["--executor", "inline", "--nthreads", "1", "--log-level", "silent"];

const dir = mkdtempSync(join(tmpdir(), "weft-bare-ms-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The warning `weft COMMAND` prints for `FLAG TEXT`, read as `ms`. */
const warning = (command: string, flag: string, text: string, ms: number): string =>
  `weft ${command}: ${flag} ${text} is read as ${ms} ms (Dask reads a bare number as seconds): write ${ms}ms to keep it, or ${ms}s\n`;

describe("bareMillisecondsWarning", () => {
  it("warns of a bare number under a second, naming the flag and the value typed", () => {
    expect(bareMillisecondsWarning("worker", "--death-timeout", "60")).toBe(
      warning("worker", "--death-timeout", "60", 60),
    );
    expect(bareMillisecondsWarning("worker", "--death-timeout", "+60")).toBe(
      warning("worker", "--death-timeout", "+60", 60),
    );
    expect(bareMillisecondsWarning("status", "--connect-timeout", "999")).toBe(
      warning("status", "--connect-timeout", "999", 999),
    );
    expect(bareMillisecondsWarning("status", "--connect-timeout", "1")).toBe(
      warning("status", "--connect-timeout", "1", 1),
    );
  });

  it("says nothing of a number with a unit, of a second or more, or of one the option refuses", () => {
    for (const text of ["60s", "60ms", "60 ms", "1000", "30000", "1e3", "0", "1.5", "-60", "x"]) {
      expect(bareMillisecondsWarning("worker", "--death-timeout", text), text).toBeNull();
    }
    expect(bareMillisecondsWarning("worker", "--death-timeout", undefined)).toBeNull();
  });
});

describe("the timeouts of milliseconds given a bare number under a second", () => {
  it("weft worker --death-timeout 200 warns, then waits 200 ms as before; 200ms does not warn", async () => {
    const missing = join(dir, "missing.json");
    const notFound = `weft worker: cannot start: no scheduler file at ${missing} after 200 ms (is the scheduler started with --scheduler-file?)\n`;
    const bare = await runWeft([
      "worker",
      "--scheduler-file",
      missing,
      ...WORKER,
      "--death-timeout",
      "200",
    ]);
    expect(bare.code).toBe(2);
    expect(bare.err).toBe(warning("worker", "--death-timeout", "200", 200) + notFound);
    const unit = await runWeft([
      "worker",
      "--scheduler-file",
      missing,
      ...WORKER,
      "--death-timeout",
      "200ms",
    ]);
    expect(unit.err).toBe(notFound);
  });

  it("weft status --connect-timeout, weft restart --timeout, weft run --connect-timeout and weft scheduler --close-worker-grace warn", async () => {
    const status = await runWeft(["status", "tcp://127.0.0.1:1", "--connect-timeout", "300"]);
    expect(status.code).toBe(2);
    expect(status.err).toMatch(
      new RegExp(`^${escaped(warning("status", "--connect-timeout", "300", 300))}weft status: `),
    );
    const restart = await runWeft([
      "restart",
      "tcp://127.0.0.1:1",
      "--timeout",
      "200",
      "--connect-timeout",
      "300ms",
    ]);
    expect(restart.err).toMatch(
      new RegExp(`^${escaped(warning("restart", "--timeout", "200", 200))}weft restart: `),
    );
    const run = await runWeft([
      "run",
      join(dir, "no-graph.json"),
      "--scheduler",
      "tcp://127.0.0.1:1",
      "--connect-timeout",
      "300",
    ]);
    expect(run.err).toMatch(
      new RegExp(`^${escaped(warning("run", "--connect-timeout", "300", 300))}weft run: `),
    );
    // A --listen refused at once: the warning comes before the scheduler starts.
    const scheduler = await runWeft([
      "scheduler",
      "--listen",
      "udp://127.0.0.1:1",
      "--close-worker-grace",
      "500",
    ]);
    expect(scheduler.err).toMatch(
      new RegExp(
        `^${escaped(warning("scheduler", "--close-worker-grace", "500", 500))}weft scheduler: cannot start: `,
      ),
    );
  });

  it("weft worker --nanny warns once, not again in the worker it starts with the same options", () => {
    const missing = join(dir, "missing-nanny.json");
    const r = spawnSync(
      process.execPath,
      [
        WEFT_BIN,
        "worker",
        "--nanny",
        "--scheduler-file",
        missing,
        ...WORKER,
        "--death-timeout",
        "300",
      ],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(r.status).toBe(2);
    const warned = r.stderr.split("\n").filter((line) => line.includes("is read as 300 ms"));
    expect(warned).toEqual([warning("worker", "--death-timeout", "300", 300).trimEnd()]);
    expect(r.stderr).toContain(`no scheduler file at ${missing} after 300 ms`);
  }, 60_000);
});

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
