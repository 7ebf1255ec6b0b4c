import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { findsOtherWeft, isUploadedModule, runningEntries } from "./uploadImports.ts";

describe("isUploadedModule", () => {
  it("is true for a file directly in an upload directory only", () => {
    expect(isUploadedModule("file:///tmp/weft-uploads-12-Ab3/tasks.mjs")).toBe(true);
    expect(isUploadedModule("/tmp/weft-uploads-12-Ab3/tasks.mjs")).toBe(true);
    expect(isUploadedModule("file:///tmp/weft-uploads-12-Ab3/sub/tasks.mjs")).toBe(false);
    expect(isUploadedModule("file:///tmp/my-weft-uploads-12-Ab3/tasks.mjs")).toBe(false);
    expect(isUploadedModule("file:///tmp/weft-uploads-x-Ab3/tasks.mjs")).toBe(false);
  });
});

describe("runningEntries", () => {
  const root = new URL("../../", import.meta.url);

  it("gives weft's entry points as built, or their sources when weft runs from them", () => {
    const built = runningEntries(root, false);
    expect(built.weft).toBe(new URL("dist/client/index.js", root).href);
    expect(built["weft/worker"]).toBe(new URL("dist/worker/index.js", root).href);
    const sources = runningEntries(root, true);
    expect(sources.weft).toBe(new URL("src/client/index.ts", root).href);
    expect(sources["weft/scheduler/state"]).toBe(
      new URL("src/scheduler/state/index.ts", root).href,
    );
    // Not built: the same file either way.
    expect(sources["weft/package.json"]).toBe(new URL("package.json", root).href);
  });
});

describe("findsOtherWeft", () => {
  it("is false only where Node.js finds the running weft itself, through links too", () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-finds-"));
    try {
      // A project with its own weft, and another with a link to that same install.
      const own = join(dir, "proj", "node_modules", "weft");
      mkdirSync(own, { recursive: true });
      writeFileSync(join(own, "package.json"), '{"name": "weft", "exports": "./index.js"}');
      writeFileSync(join(own, "index.js"), "");
      mkdirSync(join(dir, "linked", "node_modules"), { recursive: true });
      symlinkSync(own, join(dir, "linked", "node_modules", "weft"));
      mkdirSync(join(dir, "bare"));
      const running = pathToFileURL(join(own, "index.js")).href;
      const tasks = (project: string) => pathToFileURL(join(dir, project, "tasks.mjs")).href;
      expect(findsOtherWeft(tasks("proj"), running)).toBe(false);
      expect(findsOtherWeft(`${tasks("proj")}?weft-retry=1`, running)).toBe(false);
      expect(findsOtherWeft(tasks("linked"), running)).toBe(false);
      // Another copy (a global weft worker running beside the project's), or none.
      const elsewhere = pathToFileURL("/opt/weft/dist/client/index.js").href;
      expect(findsOtherWeft(tasks("proj"), elsewhere)).toBe(true);
      expect(findsOtherWeft(tasks("bare"), running)).toBe(true);
      expect(findsOtherWeft("data:text/javascript,export {}", running)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
