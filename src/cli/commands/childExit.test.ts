import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { childExit } from "./childExit.ts";

describe("childExit", () => {
  it("a spawn that fails is a start that failed: exit 2, said", async () => {
    const lines: string[] = [];
    const child = spawn(join("/nonexistent", "weft-node"), [], {
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    expect(await childExit(child, (l) => lines.push(l))).toEqual({ code: 2, signal: null });
    expect(lines).toEqual([
      `cannot start a worker process: spawn ${join("/nonexistent", "weft-node")} ENOENT`,
    ]);
  });

  it("an error of a process that started (a kill that failed) is told of, and its exit still waited for", async () => {
    const lines: string[] = [];
    const child = spawn(process.execPath, ["-e", "setTimeout(() => process.exit(5), 300)"], {
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    const ended = childExit(child, (l) => lines.push(l));
    await new Promise((resolve) => child.once("spawn", resolve));
    // What Node emits for a kill() refused (EPERM); a second one must not go unheard.
    child.emit("error", new Error("kill EPERM"));
    child.emit("error", new Error("kill EPERM"));
    // Before, the first ended the wait as a failed start (exit 2), the worker running on.
    expect(await ended).toEqual({ code: 5, signal: null });
    expect(lines).toEqual([
      "an operation on the worker process failed (kill EPERM): it runs on, still watched",
      "an operation on the worker process failed (kill EPERM): it runs on, still watched",
    ]);
  });

  it("a process killed by a signal ends with it", async () => {
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const ended = childExit(child, () => {});
    await new Promise((resolve) => child.once("spawn", resolve));
    child.kill("SIGKILL");
    expect(await ended).toEqual({ code: 1, signal: "SIGKILL" });
  });
});
