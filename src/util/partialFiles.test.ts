import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const WEFT = fileURLToPath(new URL("../../bin/weft.js", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("a whole file's partial file", () => {
  it("is removed when SIGINT ends weft while it writes it (weft sim --dump)", async () => {
    // A dump of some MB is written over many turns of the event loop, for the signal to
    // land in; on a loaded host the write may still end before the signal arrives (the
    // run then exits 0, having renamed its file), so a larger dump is tried next. Plain
    // msgpack, not YAML: as many MB (7.7 at first) and write chunks for 2.7 s of CPU, not
    // 10 s (3,000 tasks' YAML, whose formatting was most of the file's CPU).
    const endings: string[] = [];
    for (const tasks of [6000, 24000, 96000]) {
      const ending = await interruptDump(tasks);
      endings.push(`${tasks} tasks: ${ending.by}`);
      if (ending.by === "SIGINT") {
        // Ended by the signal as before, but with the partial file removed: it stayed, hidden.
        expect(ending.partials).toEqual([]);
        return;
      }
      expect(ending.by, "the run failed otherwise than by the signal").toBe("exit 0");
    }
    expect.fail(`no run was ended by the signal mid-write: ${endings.join("; ")}`);
  });
});

/** Run `weft sim --dump` of `tasks` tasks, SIGINT it once its partial file is made. */
async function interruptDump(tasks: number): Promise<{ by: string; partials: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "weft-partial-"));
  dirs.push(dir);
  const args = ["sim", "--workload", "map", "--tasks", String(tasks), "--no-validate"];
  const more = ["--faults", "none", "--no-shrink", "--dump", join(dir, "cluster.msgpack")];
  const child = spawn(process.execPath, [WEFT, ...args, ...more], { stdio: "ignore" });
  let sent = false;
  // As soon as the partial file is made: the write is under way.
  const watcher = watch(dir, (_, name) => {
    if (sent || !name?.endsWith(".partial")) return;
    sent = true;
    child.kill("SIGINT");
  });
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null];
  watcher.close();
  expect(sent, "the partial file was never made").toBe(true);
  const partials = readdirSync(dir).filter((name) => name.endsWith(".partial"));
  return { by: signal ?? `exit ${code}`, partials };
}
