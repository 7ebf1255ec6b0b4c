import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UploadDirectory } from "./uploadDirectory.ts";

let base = "";
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "weft-upload-dir-test-"));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const bytes = (s: string) => new TextEncoder().encode(s);

describe("UploadDirectory", () => {
  it("saves files side by side in a directory of its own, made on the first save", async () => {
    const uploads = new UploadDirectory(base);
    expect(uploads.path).toBeNull();
    const a = await uploads.save({
      name: "a.mjs",
      data: bytes("export const a = 1;\n"),
      load: true,
    });
    const b = await uploads.save({ name: "b.json", data: bytes("{}"), load: false });
    const dir = uploads.path as string;
    expect(dir).toMatch(new RegExp(`^${base}/weft-uploads-${process.pid}-`));
    expect(fileURLToPath(a)).toBe(join(dir, "a.mjs"));
    expect(fileURLToPath(b)).toBe(join(dir, "b.json"));
    expect(readFileSync(join(dir, "a.mjs"), "utf8")).toBe("export const a = 1;\n");
    // Its .js and .ts files are ES modules, as task modules are.
    expect(JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))).toMatchObject({
      type: "module",
    });
    uploads.close();
    expect(existsSync(dir)).toBe(false);
    await expect(uploads.save({ name: "c.mjs", data: bytes(""), load: true })).rejects.toThrow(
      "the upload directory is removed: the process is exiting",
    );
  });

  it("takes the same file again, and refuses another under a name saved", async () => {
    const uploads = new UploadDirectory(base);
    const first = await uploads.save({ name: "m.mjs", data: bytes("1"), load: true });
    expect(await uploads.save({ name: "m.mjs", data: bytes("1"), load: false })).toBe(first);
    // Both at once: the second is checked against the first, not written over it.
    const [one, two] = await Promise.allSettled([
      uploads.save({ name: "n.mjs", data: bytes("1"), load: true }),
      uploads.save({ name: "n.mjs", data: bytes("2"), load: true }),
    ]);
    expect(one.status).toBe("fulfilled");
    expect(two).toMatchObject({
      status: "rejected",
      reason: {
        message: expect.stringMatching(/a different file named n\.mjs was uploaded already/),
      },
    });
    expect(readFileSync(join(uploads.path as string, "n.mjs"), "utf8")).toBe("1");
    uploads.close();
  });

  it("the same file saved again while the first save writes is ready only once written", async () => {
    const uploads = new UploadDirectory(base);
    const data = new Uint8Array(32 * 1024 * 1024).fill(7);
    const first = uploads.save({ name: "big.mjs", data, load: false });
    // Another worker of the process, given the same file: it must not import a partial one.
    const url = await uploads.save({ name: "big.mjs", data, load: false });
    expect(readFileSync(fileURLToPath(url)).length).toBe(data.length);
    expect(await first).toBe(url);
    uploads.close();
  });

  it("refuses names that are not a file's, and what cannot be imported", async () => {
    const uploads = new UploadDirectory(base);
    const data = bytes("x");
    for (const [name, why] of [
      ["", /non-empty string/],
      ["..", /is not a file name/],
      ["a/b.mjs", /is not a file name/],
      ["a\\b.mjs", /is not a file name/],
      ["a\0.mjs", /is not a file name/],
      ["x".repeat(256), /longer than 255 bytes/],
      ["package.json", /package\.json cannot be uploaded/],
    ] as const) {
      await expect(uploads.save({ name, data, load: false })).rejects.toThrow(why);
    }
    await expect(uploads.save({ name: "t.txt", data, load: true })).rejects.toThrow(
      /t\.txt cannot be imported/,
    );
    await expect(
      uploads.save({ name: "t.txt", data: "x" as unknown as Uint8Array, load: false }),
    ).rejects.toThrow("the data of t.txt must be bytes");
    expect(uploads.path).toBeNull();
  });

  it("removes the directories of processes no longer running as it makes its own", async () => {
    const stale = join(base, "weft-uploads-999999999-abc");
    mkdirSync(stale);
    const uploads = new UploadDirectory(base);
    await uploads.save({ name: "a.mjs", data: bytes(""), load: true });
    expect(existsSync(stale)).toBe(false);
    uploads.close();
  });
});
