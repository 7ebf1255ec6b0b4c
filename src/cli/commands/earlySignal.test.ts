/**
 * A SIGINT or SIGTERM sent to `weft worker` or `weft scheduler` while its modules
 * still load (bin/weft.js through tsx: over a second) closes it with exit 0 as one a
 * moment later does; a command that never listens still dies of it.
 */

import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { refusingAddress } from "../testContext.ts";
import { claimEarlySignal, EARLY_SIGNALS_KEY, type EarlySignals } from "./earlySignal.ts";
import { untilSignal } from "./serveUntil.ts";

/** The `weft` command of this checkout. */
const WEFT_BIN = fileURLToPath(new URL("../../../bin/weft.js", import.meta.url));

/**
 * When to signal: long after node started and bin/weft.js ran its first lines (some
 * tens of ms on an idle machine), long before the command's modules loaded (about a
 * second through tsx). A quarter of what `weft worker` without a scheduler takes, node's
 * start and the worker's modules loading (its action, which refuses to start, imports
 * them), measured now: a fixed delay fell before bin/weft.js ran on a machine loaded by
 * other tests (and neither `weft --version` nor `weft worker --help` loads them).
 */
let earlyMs = 250;

beforeAll(async () => {
  const started = Date.now();
  const child = spawn(process.execPath, [WEFT_BIN, "worker"], {
    stdio: "ignore",
  });
  await new Promise((resolve) => child.once("exit", resolve));
  earlyMs = Math.max(earlyMs, (Date.now() - started) / 4);
});

interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

async function signalledEarly(args: string[], signal: NodeJS.Signals): Promise<Ended> {
  const child = spawn(process.execPath, [WEFT_BIN, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once("exit", (code, sig) => resolve([code, sig])),
  );
  try {
    await sleep(earlyMs);
    child.kill(signal);
    const [code, sig] = await Promise.race([
      exited,
      sleep(20_000).then(() => {
        throw new Error(`weft ${args[0]} did not end within 20 s of ${signal}`);
      }),
    ]);
    return { code, signal: sig, stderr };
  } finally {
    child.kill("SIGKILL");
  }
}

const WORKER = ["--executor", "inline", "--nthreads", "1", "--log-level", "silent"];

describe("a signal while the modules load", () => {
  it("SIGTERM or SIGINT closes weft worker waiting for its scheduler with exit 0, no stack trace", async () => {
    const address = await refusingAddress();
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const r = await signalledEarly(["worker", address, ...WORKER], signal);
      expect(r, signal).toEqual({ code: 0, signal: null, stderr: "" });
    }
  }, 60_000);

  it("SIGTERM closes weft scheduler with exit 0", async () => {
    const r = await signalledEarly(
      ["scheduler", "--listen", "tcp://127.0.0.1:0", "--log-level", "silent"],
      "SIGTERM",
    );
    expect(r).toEqual({ code: 0, signal: null, stderr: "" });
  }, 30_000);

  it("a command that never listens still ends by the signal, as without the record", async () => {
    // Refused before the worker listens for signals: nothing claims the SIGTERM.
    const r = await signalledEarly(
      ["worker", await refusingAddress(), ...WORKER, "--max-restarts", "3"],
      "SIGTERM",
    );
    expect(r.signal).toBe("SIGTERM");
    expect(r.stderr).toMatch(/--max-restarts applies with --nanny only/);
  }, 30_000);
});

describe("claimEarlySignal", () => {
  const holder = globalThis as { [EARLY_SIGNALS_KEY]?: EarlySignals };
  afterEach(() => {
    delete holder[EARLY_SIGNALS_KEY];
  });

  it("untilSignal honours a signal recorded before it listened, once", async () => {
    let claims = 0;
    holder[EARLY_SIGNALS_KEY] = {
      claim: () => {
        claims++;
        return "SIGTERM";
      },
    };
    const stop = new AbortController();
    const got = await Promise.race([
      untilSignal(sleep(2_000, undefined, { signal: stop.signal }).catch(() => {})),
      sleep(1_000).then(() => "still waiting"),
    ]);
    stop.abort();
    expect(got).toBe("SIGTERM");
    expect(claims).toBe(1);
    expect(process.listenerCount("SIGTERM")).toBe(0);
    // Claimed: a later wait is not ended by it.
    let finish!: () => void;
    const later = untilSignal(new Promise((resolve) => (finish = resolve)));
    finish();
    expect(await later).toBeNull();
  });

  it("drops a recorded signal the caller does not listen for (SIGINT under a nanny)", () => {
    holder[EARLY_SIGNALS_KEY] = { claim: () => "SIGINT" };
    expect(claimEarlySignal(["SIGTERM"])).toBeNull();
    expect(holder[EARLY_SIGNALS_KEY]).toBeUndefined();
    expect(claimEarlySignal(["SIGINT", "SIGTERM"])).toBeNull();
  });
});
