import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { fileDigest } from "./fileDigest.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "weft-digest-"));
  dirs.push(dir);
  return dir;
}

describe("fileDigest", () => {
  it("digests a regular file's bytes, its URL's query ignored; null for none", () => {
    const dir = freshDir();
    writeFileSync(join(dir, "m.mjs"), "export const x = 1;\n");
    const url = pathToFileURL(join(dir, "m.mjs")).href;
    const sha = createHash("sha256").update("export const x = 1;\n").digest("hex");
    expect(fileDigest(url)).toBe(sha);
    expect(fileDigest(`${url}?weft-retry=1`)).toBe(sha);
    expect(fileDigest(pathToFileURL(join(dir, "gone.mjs")).href)).toBeNull();
    expect(fileDigest(pathToFileURL(dir).href)).toBeNull();
  });

  it("does not read a device or a FIFO: null (a link to /dev/zero was read until memory ran out)", () => {
    const dir = freshDir();
    // /dev/null, which ends at once, stands for a device: it was digested as empty.
    symlinkSync("/dev/null", join(dir, "device.mjs"));
    expect(fileDigest(pathToFileURL(join(dir, "device.mjs")).href)).toBeNull();
    const fifo = join(dir, "fifo.mjs");
    execFileSync("mkfifo", [fifo]);
    // A writer, so that a read of the FIFO ends (it was read, blocking until one came).
    const writer = spawn("sh", ["-c", 'printf x > "$0"', fifo], { stdio: "ignore" });
    try {
      expect(fileDigest(pathToFileURL(fifo).href)).toBeNull();
    } finally {
      writer.kill();
    }
  });
});
