import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { isEntryPoint } from "./entryPoint.ts";

const savedArgv = [...process.argv];
afterEach(() => {
  process.argv.splice(0, process.argv.length, ...savedArgv);
});
const thisFile = fileURLToPath(import.meta.url);

describe("isEntryPoint", () => {
  it("is true for the module node was started with, also through a symlink", () => {
    process.argv[1] = thisFile;
    expect(isEntryPoint(import.meta.url)).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), "weft-entry-"));
    try {
      const link = join(dir, "script.ts");
      symlinkSync(thisFile, link);
      process.argv[1] = link;
      expect(isEntryPoint(import.meta.url)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is false for another module, a missing script or none", () => {
    process.argv[1] = thisFile;
    expect(isEntryPoint(new URL("./heapSet.ts", import.meta.url).href)).toBe(false);
    process.argv[1] = "/no/such/script.ts";
    expect(isEntryPoint(import.meta.url)).toBe(false);
    process.argv.splice(1);
    expect(isEntryPoint(import.meta.url)).toBe(false);
  });
});
