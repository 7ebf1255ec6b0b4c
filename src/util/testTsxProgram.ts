/**
 * A program run as a user runs it, for tests that need a process of its own: a
 * TypeScript one through tsx (`node --import tsx`), a JavaScript one (`.mjs`) by
 * Node.js alone.
 */

import { spawn } from "node:child_process";
import { testsRunBuild } from "../cli/testBuiltCommand.ts";

/**
 * The file a test's program `name` (no extension) is written to in `dir`: `.mjs`,
 * run by Node.js alone, when it imports the build (`weftModuleUrl`, when
 * `testsRunBuild()`), else `.mts`. The program must be JavaScript either way:
 * without tsx's loader each costs some 1.5 s of CPU less (2.2 s against 0.7 s to
 * start a LocalCluster and end).
 */
export function programFile(dir: string, name: string): string {
  return `${dir}/${name}${testsRunBuild() ? ".mjs" : ".mts"}`;
}

/** Node.js's arguments to run `program`: through tsx unless it is JavaScript. */
export function programArgs(program: string): string[] {
  return program.endsWith(".mjs") ? [program] : ["--import", "tsx", program];
}

/** What the finished program gave: its output and its exit code (null if a signal ended it). */
export interface TsxProgramOutcome {
  readonly stdout: string;
  readonly stderr: string;
  readonly status: number | null;
}

/**
 * `program` run (with tsx unless `.mjs`, see {@link programArgs}) at the log level `level` (`WEFT_LOG_LEVEL`), killed
 * after `timeoutMs`, its output read to the end. Not `spawnSync`: that blocks
 * the test's process, so tests running side by side (`it.concurrent`) would not.
 */
export async function runTsxProgram(
  program: string,
  level: string,
  timeoutMs = 60_000,
): Promise<TsxProgramOutcome> {
  const child = spawn(process.execPath, programArgs(program), {
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
