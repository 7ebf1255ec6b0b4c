/** A TypeScript program run as a user runs it (`node --import tsx`), for tests that need a process of its own. */

import { spawn } from "node:child_process";

/** What the finished program gave: its output and its exit code (null if a signal ended it). */
export interface TsxProgramOutcome {
  readonly stdout: string;
  readonly stderr: string;
  readonly status: number | null;
}

/**
 * `program` run with tsx at the log level `level` (`WEFT_LOG_LEVEL`), killed
 * after `timeoutMs`, its output read to the end. Not `spawnSync`: that blocks
 * the test's process, so tests running side by side (`it.concurrent`) would not.
 */
export async function runTsxProgram(
  program: string,
  level: string,
  timeoutMs = 60_000,
): Promise<TsxProgramOutcome> {
  const child = spawn(process.execPath, ["--import", "tsx", program], {
    stdio: ["ignore", "pipe", "pipe"],
    timeout: timeoutMs,
    env: { ...process.env, WEFT_LOG_LEVEL: level },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  // "close", not "exit": the streams are read to their end by then.
  const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { stdout, stderr, status };
}
