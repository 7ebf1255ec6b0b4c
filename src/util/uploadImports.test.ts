import { describe, expect, it } from "vitest";
import { isUploadedModule } from "./uploadImports.ts";

describe("isUploadedModule", () => {
  it("is true for a file directly in an upload directory only", () => {
    expect(isUploadedModule("file:///tmp/weft-uploads-12-Ab3/tasks.mjs")).toBe(true);
    expect(isUploadedModule("/tmp/weft-uploads-12-Ab3/tasks.mjs")).toBe(true);
    expect(isUploadedModule("file:///tmp/weft-uploads-12-Ab3/sub/tasks.mjs")).toBe(false);
    expect(isUploadedModule("file:///tmp/my-weft-uploads-12-Ab3/tasks.mjs")).toBe(false);
    expect(isUploadedModule("file:///tmp/weft-uploads-x-Ab3/tasks.mjs")).toBe(false);
  });
});
