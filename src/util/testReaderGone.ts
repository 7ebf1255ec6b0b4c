/** For tests of a process whose output's reader has gone (`… | head -1`). */

import { spawn } from "node:child_process";

/**
 * Run node, through tsx, with `args`, the reader of its `gone` stream destroyed
 * at once (its next write there fails with EPIPE): its exit code, and what it
 * wrote on the other stream.
 */
export async function runWithReaderGone(
  args: readonly string[],
  gone: "stdout" | "stderr",
): Promise<{ code: number | null; other: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [closed, kept] =
    gone === "stdout" ? [child.stdout, child.stderr] : [child.stderr, child.stdout];
  closed.destroy();
  let other = "";
  kept.on("data", (b: Buffer) => {
    other += b.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, other };
}
