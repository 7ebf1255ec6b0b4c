import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { importModule } from "./importModule.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh directory holding `files` (name → source); its path. */
function moduleDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "weft-import-"));
  dirs.push(dir);
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
  return dir;
}

const failure = (url: string) =>
  importModule(url).then(
    () => null,
    (err: unknown) => err,
  );

describe("importModule", () => {
  it("refuses a device or a FIFO, naming it, unread (Node.js read a link to /dev/zero without end)", async () => {
    const dir = moduleDir({});
    // /dev/null, which ends at once, stands for a device: it was imported as an empty module.
    symlinkSync("/dev/null", join(dir, "device.mjs"));
    const device = pathToFileURL(join(dir, "device.mjs")).href;
    expect(await failure(device)).toMatchObject({
      message: `cannot import ${device}: it is a character device, not a regular file`,
      code: "ENOTREGULAR",
    });
    execFileSync("mkfifo", [join(dir, "fifo.mjs")]);
    const fifo = pathToFileURL(join(dir, "fifo.mjs")).href;
    // A writer, so that a read of the FIFO ends (it was read, blocking until one came).
    const writer = spawn("sh", ["-c", 'printf x > "$0"', join(dir, "fifo.mjs")], {
      stdio: "ignore",
    });
    try {
      expect(await failure(fifo)).toMatchObject({
        message: `cannot import ${fifo}: it is a FIFO (named pipe), not a regular file`,
      });
    } finally {
      writer.kill();
    }
  });

  it("imports a module whose missing import came since under another URL, and while it is still missing asks the same URL again (one failed module kept, not one a try)", async () => {
    const dir = moduleDir({ "main.mjs": 'export { two } from "./helper.mjs";\n' });
    const url = pathToFileURL(join(dir, "main.mjs")).href;
    const first = await failure(url);
    expect(String(first)).toMatch(/Cannot find module .*helper\.mjs/);
    // Node.js gives a URL's kept failure again, the same error: no new URL was asked.
    const second = await failure(url);
    const third = await failure(url);
    expect(third).toBe(second);
    writeFileSync(join(dir, "helper.mjs"), "export const two = 2;\n");
    const ns = await importModule(url);
    expect(ns.two).toBe(2);
    expect(await importModule(url)).toBe(ns);
  });

  it("imports a module that threw as it loaded, once changed on disk, under another URL; unchanged, asks the URL that failed", async () => {
    const dir = moduleDir({ "tasks.mjs": 'throw new Error("broken");\n' });
    const path = join(dir, "tasks.mjs");
    const url = pathToFileURL(path).href;
    const first = await failure(url);
    expect(String(first)).toContain("broken");
    // Unchanged: the failure Node.js keeps for the URL, no module evaluated again.
    expect(await failure(url)).toBe(first);
    writeFileSync(path, "export const fixed = 1;\n");
    const ns = await importModule(url);
    expect(ns.fixed).toBe(1);
    // Imported, it stays: a later change is not imported again.
    writeFileSync(path, "export const fixed = 2;\n");
    expect(await importModule(url)).toBe(ns);
  });
});
