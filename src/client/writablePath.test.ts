import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { checkWritablePath, writing } from "./writablePath.ts";

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

  it("refuses a directory that is not there, a directory, and a file for a directory, naming the call and the path, with the file error's code", async () => {
    const dir = await scratch();
    const missing = join(dir, "nope", "r.html");
    await expect(checkWritablePath("report", missing)).rejects.toMatchObject({
      message: `report: cannot write to ${missing}: no such directory: ${join(dir, "nope")}`,
      code: "ENOENT",
      path: missing,
    });
    await expect(checkWritablePath("report", dir)).rejects.toMatchObject({
      message: `report: cannot write to ${dir}: it is a directory`,
      code: "EISDIR",
    });
    await writeFile(join(dir, "file"), "x");
    await expect(checkWritablePath("report", join(dir, "file", "r.html"))).rejects.toMatchObject({
      message: `report: cannot write to ${join(dir, "file", "r.html")}: ${join(dir, "file")} is not a directory`,
      code: "ENOTDIR",
    });
    await expect(
      checkWritablePath("report", new URL("http://example.com/r.html")),
    ).rejects.toMatchObject({
      message: expect.stringMatching(/^report: cannot write to http:\/\/example\.com\/r\.html: /),
      code: "ERR_INVALID_URL_SCHEME",
    });
  });
});

describe("writing", () => {
  it("names the call and the path of a file error, keeping its code and the error as the cause", async () => {
    const dir = await scratch();
    const path = join(dir, "gone", "r.html");
    const err = await writing("report", path, () => writeFile(path, "x")).catch((e: unknown) => e);
    expect(err).toMatchObject({
      message: expect.stringMatching(
        new RegExp(`^report: cannot write to ${path}: ENOENT: no such file or directory`),
      ),
      code: "ENOENT",
      path,
    });
    expect(((err as Error).cause as NodeJS.ErrnoException).syscall).toBe("open");
    // A file: URL is said as its path, as the check before the work says it and
    // Node.js's own error has it (it was the URL, the message saying file:///…).
    const url = pathToFileURL(path);
    const early = await checkWritablePath("report", url).catch((e: unknown) => e);
    const late = await writing("report", url, () => writeFile(url, "x")).catch((e: unknown) => e);
    expect(early).toMatchObject({ path, code: "ENOENT" });
    expect(late).toMatchObject({
      message: expect.stringMatching(new RegExp(`^report: cannot write to ${path}: ENOENT`)),
      path,
      code: "ENOENT",
    });
    // Not a file error: left as it is.
    const other = new RangeError("not a file's");
    await expect(writing("report", path, () => Promise.reject(other))).rejects.toBe(other);
  });
});
