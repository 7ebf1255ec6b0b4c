/**
 * A SIGINT or SIGTERM sent to `weft worker` or `weft scheduler` while its modules
 * still load (bin/weft.js through tsx: over a second) closes it with exit 0 as one a
 * moment later does; a command that never listens still dies of it.
 */

import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RUN_BUILD_VARIABLE } from "../testBuiltCommand.ts";
import { refusingAddress } from "../testContext.ts";
import { claimEarlySignal, EARLY_SIGNALS_KEY, type EarlySignals } from "./earlySignal.ts";
import { untilSignal } from "./serveUntil.ts";

/** The `weft` command of this checkout. */
const WEFT_BIN = fileURLToPath(new URL("../../../bin/weft.js", import.meta.url));

/**
 * Through tsx, on the sources, whatever the test run chose (`vitest.config.ts` has
 * `weft` processes run the build when it is current): the modules then load for over
 * a second after bin/weft.js starts recording, the window these tests signal in; the
 * build's load is over in a tenth of that.
 */
const SOURCES_ENV = { ...process.env, [RUN_BUILD_VARIABLE]: "0" };

/**
 * Preloaded into each `weft` process this file starts (`node --import`): writes a
 * byte to fd 3 once both SIGINT and SIGTERM have a listener, that is when
 * bin/weft.js's first lines record early signals, and its command's modules start
 * loading (over a second through tsx). Not at the first of the two: the process,
 * preempted there, died of a SIGTERM sent before its listener was added. Only for
 * bin/weft.js's own listeners (the caller's frame): the command's, added once its
 * modules loaded, would have these tests pass with no early recording at all. A signal sent then lands while they
 * load, on a loaded machine too, where a delay guessed from a first run fell before
 * bin/weft.js ran (the process died of the signal) or after the modules loaded.
 */
const dir = mkdtempSync(join(tmpdir(), "weft-early-signal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const RECORDING_MARK = join(dir, "recording-mark.mjs");
writeFileSync(
  RECORDING_MARK,
  `import { writeSync } from "node:fs";\n` +
    `const on = process.on.bind(process);\n` +
    `let said = false;\n` +
    `process.on = (name, listener) => {\n` +
    `  on(name, listener);\n` +
    `  const byWeftBin = new Error().stack.split("\\n")[2].includes("/bin/weft.js");\n` +
    `  if (!said && byWeftBin && process.listenerCount("SIGINT") > 0 && process.listenerCount("SIGTERM") > 0) {\n` +
    `    said = true;\n` +
    `    writeSync(3, "r");\n` +
    `  }\n` +
    `  return process;\n` +
    `};\n`,
);

interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

async function signalledEarly(args: string[], signal: NodeJS.Signals): Promise<Ended> {
  const child = spawn(process.execPath, ["--import", RECORDING_MARK, WEFT_BIN, ...args], {
    stdio: ["ignore", "ignore", "pipe", "pipe"],
    env: SOURCES_ENV,
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once("exit", (code, sig) => resolve([code, sig])),
  );
  const recording = once(child.stdio[3] as Readable, "data");
  try {
    await Promise.race([
      recording,
      exited.then(() => {
        throw new Error(`weft ${args[0]} exited before it recorded signals: ${stderr}`);
      }),
      sleep(20_000).then(() => {
        throw new Error(`weft ${args[0]} did not record signals within 20 s`);
      }),
    ]);
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
