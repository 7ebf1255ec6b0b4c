import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { buildIsCurrent, RUN_BUILD_VARIABLE } from "../cli/testBuiltCommand.ts";

const WEFT = fileURLToPath(new URL("../../bin/weft.js", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("a whole file's partial file", () => {
  it("is removed when SIGINT ends weft while it writes it (weft sim --dump)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-partial-"));
    dirs.push(dir);
    // A dump of some MB: written over many turns of the event loop, for the signal to land in.
    const args = ["sim", "--workload", "map", "--tasks", "3000", "--no-validate"];
    const more = ["--faults", "none", "--no-shrink", "--dump", join(dir, "cluster.yaml")];
    // The build when current (a shared fork: its environment is not this file's to set).
    const env = { ...process.env, ...(buildIsCurrent() ? { [RUN_BUILD_VARIABLE]: "1" } : {}) };
    const child = spawn(process.execPath, [WEFT, ...args, ...more], { stdio: "ignore", env });
    let sent = false;
    // As soon as the partial file is made: the write is under way.
    const watcher = watch(dir, (_, name) => {
      if (sent || !name?.endsWith(".partial")) return;
      sent = true;
      child.kill("SIGINT");
    });
    const [, signal] = await once(child, "exit");
    watcher.close();
    expect(sent).toBe(true);
    // Ended by the signal as before, but with the partial file removed: it stayed, hidden.
    expect(signal).toBe("SIGINT");
    expect(readdirSync(dir).filter((name) => name.endsWith(".partial"))).toEqual([]);
  });
});
