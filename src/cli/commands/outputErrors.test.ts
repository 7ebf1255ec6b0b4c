/**
 * `weft scheduler` and `weft worker` whose stdout cannot be written (a file on a full
 * disk: `/dev/full`) go on serving, saying once on stderr that the output is lost.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { Scheduler } from "../../scheduler/scheduler.ts";

/** The `weft` command of this checkout. */
const WEFT_BIN = fileURLToPath(new URL("../../../bin/weft.js", import.meta.url));

/** What a process wrote to stderr, and its exit. */
interface Watched {
  readonly child: ChildProcess;
  stderr: string;
  readonly exited: Promise<number | null>;
}

/** `weft ...args` with its stdout on `/dev/full` (every write fails with ENOSPC). */
function spawnOnFullDisk(args: string[]): Watched {
  const full = openSync("/dev/full", "w");
  try {
    const child = spawn(process.execPath, [WEFT_BIN, ...args], {
      stdio: ["ignore", full, "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const watched: Watched = { child, stderr: "", exited };
    child.stderr?.on("data", (d: Buffer) => {
      watched.stderr += d.toString();
    });
    return watched;
  } finally {
    closeSync(full);
  }
}

/** Resolves once `w` wrote `text` to stderr; rejects if it exits first, or after 40 s. */
async function said(w: Watched, text: string): Promise<void> {
  let exited: number | null | undefined;
  void w.exited.then((code) => {
    exited = code;
  });
  for (const until = Date.now() + 40_000; Date.now() < until; ) {
    if (w.stderr.includes(text)) return;
    if (exited !== undefined) throw new Error(`exited ${exited} first; stderr: ${w.stderr}`);
    await sleep(50);
  }
  throw new Error(`not said within 40 s; stderr: ${w.stderr}`);
}

describe.runIf(existsSync("/dev/full"))("a server whose stdout is on a full disk", () => {
  it("weft scheduler goes on serving, says so once on stderr, and stops with exit 0", async () => {
    const w = spawnOnFullDisk([
      "scheduler",
      "--listen",
      "tcp://127.0.0.1:0",
      "--log-level",
      "silent",
    ]);
    try {
      // Before, its address line threw ENOSPC: an uncaught exception, exit 1.
      await said(w, "weft scheduler: cannot write to stdout (ENOSPC");
      w.child.kill("SIGTERM");
      expect(await w.exited).toBe(0);
      expect(w.stderr.match(/cannot write to stdout/g)).toHaveLength(1);
    } finally {
      w.child.kill("SIGKILL");
    }
  }, 60_000);

  it("weft worker stays registered, and stops with exit 0", async () => {
    const scheduler = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      logger: pino({ level: "silent" }),
    });
    const args = ["--executor", "inline", "--nthreads", "1", "--log-level", "silent"];
    const w = spawnOnFullDisk([
      "worker",
      scheduler.address,
      "--listen",
      "tcp://127.0.0.1:0",
      ...args,
    ]);
    try {
      // Before, the worker registered, then died of its address line: its tasks lost.
      await said(w, "weft worker: cannot write to stdout (ENOSPC");
      expect(scheduler.state.workers.size).toBe(1);
      w.child.kill("SIGTERM");
      expect(await w.exited).toBe(0);
    } finally {
      w.child.kill("SIGKILL");
      await scheduler.close();
    }
  }, 60_000);
});

describe.runIf(existsSync("/dev/full"))("a command whose stdout is on a full disk", () => {
  it("ends with exit 2, saying why, rather than with an uncaught exception", async () => {
    const w = spawnOnFullDisk(["--version"]);
    try {
      expect(await w.exited).toBe(2);
      expect(w.stderr).toBe(
        "weft: cannot write to stdout (ENOSPC: no space left on device, write): its output is lost\n",
      );
    } finally {
      w.child.kill("SIGKILL");
    }
  }, 60_000);
});
