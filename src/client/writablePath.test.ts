import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { checkWritablePath } from "./writablePath.ts";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "weft-writable-"));
  dirs.push(dir);
  return dir;
}

describe("checkWritablePath", () => {
  it("takes a new file in a directory that is there, and a file that is there, as a path or a file: URL", async () => {
    const dir = await scratch();
    await checkWritablePath("report", join(dir, "new.html"));
    await writeFile(join(dir, "old.html"), "before");
    await checkWritablePath("report", join(dir, "old.html"));
    await checkWritablePath("report", pathToFileURL(join(dir, "new.html")));
  });

  it("refuses a directory that is not there, a directory, and a file for a directory, naming the call and the path", async () => {
    const dir = await scratch();
    await expect(checkWritablePath("report", join(dir, "nope", "r.html"))).rejects.toThrow(
      `report: cannot write to ${join(dir, "nope", "r.html")}: no such directory: ${join(dir, "nope")}`,
    );
    await expect(checkWritablePath("report", dir)).rejects.toThrow(
      `report: cannot write to ${dir}: it is a directory`,
    );
    await writeFile(join(dir, "file"), "x");
    await expect(checkWritablePath("report", join(dir, "file", "r.html"))).rejects.toThrow(
      `report: cannot write to ${join(dir, "file", "r.html")}: ${join(dir, "file")} is not a directory`,
    );
    await expect(checkWritablePath("report", new URL("http://example.com/r.html"))).rejects.toThrow(
      /^report: cannot write to http:\/\/example\.com\/r\.html: /,
    );
  });
});
