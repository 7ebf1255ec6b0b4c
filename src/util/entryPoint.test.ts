import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { isEntryPoint } from "./entryPoint.ts";
import { runWithReaderGone } from "./testReaderGone.ts";

const ENTRY_POINT = fileURLToPath(new URL("./entryPoint.ts", import.meta.url));

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

describe("exitQuietlyWhenStdoutCloses", () => {
  it("lets a script whose stderr reader is gone go on with its results (`2>&1 >out | head -1`)", async () => {
    // Notes on stderr once nobody reads them: an unhandled 'error' event ended the script.
    const script =
      `const { exitQuietlyWhenStdoutCloses } = await import(${JSON.stringify(ENTRY_POINT)});\n` +
      "exitQuietlyWhenStdoutCloses();\n" +
      "for (let i = 0; i < 5; i++) {\n" +
      '  process.stderr.write("note " + i + "\\n");\n' +
      "  await new Promise((r) => setTimeout(r, 50));\n" +
      "}\n" +
      'process.stdout.write("result\\n");\n';
    expect(await runWithReaderGone(["--input-type=module", "-e", script], "stderr")).toEqual({
      code: 0,
      other: "result\n",
    });
  }, 30_000);
});
