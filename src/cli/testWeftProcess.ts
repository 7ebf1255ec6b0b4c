/** `weft` run as a user runs it, in a process of its own, for tests that need one. */

import { type ChildProcess, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { muteServer } from "../comm/testMuteServer.ts";

/** The command's entry point, as `npm` installs it. */
export const WEFT_BIN = fileURLToPath(new URL("../../bin/weft.js", import.meta.url));

/** What a finished `weft` process gave: its exit code (null if a signal ended it) and output. */
export interface WeftProcessOutcome {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** A `weft` process started by {@link startWeft}: to signal, and how it ended. */
export interface RunningWeft {
  readonly child: ChildProcess;
  /** Resolves once it exited and both its streams were read to their end. */
  readonly outcome: Promise<WeftProcessOutcome>;
}

/**
 * Start `weft ...args` in a process of its own, given `input` on stdin (else none:
 * stdin ends at once, as `< /dev/null` gives it), reading its stdout and stderr.
 */
export function startWeft(args: readonly string[], input?: string): RunningWeft {
  const child = spawn(process.execPath, [WEFT_BIN, ...args], { stdio: "pipe" });
  child.stdin.end(input);
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  // "close", not "exit": the streams are read to their end by then.
  const outcome = new Promise<WeftProcessOutcome>((resolve) =>
    child.on("close", (code) => resolve({ code, out, err })),
  );
  return { child, outcome };
}

/** `weft ...args` in a process of its own, given `input` on stdin (else none), its stdout and stderr read to the end. */
export function weftProcess(args: readonly string[], input?: string): Promise<WeftProcessOutcome> {
  return startWeft(args, input).outcome;
}

/**
 * Start `weft ...args(hostPort)`, `hostPort` a server that accepts connections and
 * never answers (`muteServer`), SIGTERM it once it dialled there, and give what it
 * ended with (null: still running 15 s later, then SIGKILLed) and how long after
 * the signal.
 */
export async function stoppedOnceDialled(args: (hostPort: string) => readonly string[]) {
  const mute = await muteServer();
  try {
    const weft = startWeft(args(mute.hostPort));
    await mute.acceptedAtLeast(1);
    const signalled = Date.now();
    weft.child.kill("SIGTERM");
    const outcome = await Promise.race([weft.outcome, sleep(15_000, null)]);
    const tookMs = Date.now() - signalled;
    if (outcome === null) weft.child.kill("SIGKILL");
    return { outcome, tookMs };
  } finally {
    await mute.close();
  }
}
