import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

const MODULE = new URL("./nannyChildExit.ts", import.meta.url).href;

/**
 * Run `body` (module code, with `watchNanny` imported) in a process of its own:
 * how it ended, how long after `watchNanny` was called (its `called` line), and
 * what it wrote on stderr.
 */
async function watched(
  body: string,
): Promise<{ end: string; afterCallMs: number; stderr: string }> {
  const script = `const { watchNanny } = await import(${JSON.stringify(MODULE)});\n${body}`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  let calledAt = 0;
  child.stdout?.on("data", (d: Buffer) => {
    if (d.toString().includes("called") && calledAt === 0) calledAt = Date.now();
  });
  const end = await new Promise<string>((resolve) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve("still running");
    }, 30_000);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(signal ?? `exit ${code}`);
    });
  });
  return { end, afterCallMs: Date.now() - calledAt, stderr };
}

/** Block the main thread (as a synchronous task does) for `ms`. */
const block = (ms: number) => `{ const until = Date.now() + ${ms}; while (Date.now() < until); }\n`;

describe("watchNanny", () => {
  it.concurrent("leaves a process whose nanny is its parent alone", async () => {
    const { end, stderr } = await watched(
      `watchNanny(process.ppid, (err) => { throw err; }, 200);\nprocess.stdout.write("called\\n");\n${block(1_500)}`,
    );
    expect(end).toBe("exit 0");
    expect(stderr).toBe("");
  }, 60_000);

  it.concurrent("SIGKILLs a process whose nanny is gone, its main thread blocked, exitMs after it began if the nanny was never seen", async () => {
    // The nanny died while the process loaded (here: is no parent at all), 1 s before the
    // watch began: the bound runs from the process's start, not from the watch's.
    const { end, afterCallMs, stderr } = await watched(
      `await new Promise((r) => setTimeout(r, 1_000));\nwatchNanny(process.ppid + 1_000_000, (err) => { throw err; }, 2_500);\nprocess.stdout.write("called\\n");\n${block(20_000)}`,
    );
    expect(end).toBe("SIGKILL");
    // Before, 2.5 s (and a poll) after the call.
    expect(afterCallMs).toBeLessThan(2_300);
    // Its main thread blocked, the process could say nothing: the watch says why it ends.
    expect(stderr).toContain(
      "weft worker: its nanny has been gone 2.5 s and its close has not ended (a task may block its event loop): killing its process\n",
    );
  }, 60_000);
});
