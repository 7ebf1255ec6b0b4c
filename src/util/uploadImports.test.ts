import { describe, expect, it } from "vitest";
import { isUploadedModule, runningEntries } from "./uploadImports.ts";

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
