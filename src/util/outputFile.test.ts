import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  directoryProblem,
  dumpNameFailure,
  fileNameProblem,
  outputFailure,
  outputProblem,
} from "./outputFile.ts";

const dir = mkdtempSync(join(tmpdir(), "weft-output-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, "file.txt");
writeFileSync(file, "in the way");

describe("outputProblem", () => {
  it("has none with a new file in a directory, or a file to replace", async () => {
    expect(await outputProblem(join(dir, "new.json"))).toBeNull();
    expect(await outputProblem(file)).toBeNull();
  });

  it("refuses a directory, a missing directory, and a file where a directory should be", async () => {
    expect(await outputProblem(dir)).toBe("it is a directory");
    expect(await outputProblem(join(dir, "none", "out.json"))).toBe(
      `no such directory: ${join(dir, "none")}`,
    );
    expect(await outputProblem(join(file, "out.json"))).toBe(`${file} is not a directory`);
  });
});

describe("outputFailure", () => {
  it("gives the code of the file error a write would fail with", async () => {
    expect(await outputFailure(join(dir, "new.json"))).toBeNull();
    expect(await outputFailure(dir)).toEqual({ why: "it is a directory", code: "EISDIR" });
    expect(await outputFailure(join(dir, "none", "out.json"))).toEqual({
      why: `no such directory: ${join(dir, "none")}`,
      code: "ENOENT",
    });
    expect(await outputFailure(join(file, "out.json"))).toEqual({
      why: `${file} is not a directory`,
      code: "ENOTDIR",
    });
    expect(await dumpNameFailure(`${dir}/`, `${dir}/.msgpack.gz`)).toEqual({
      why: "it names a directory (it ends with /)",
      code: "EISDIR",
    });
  });
});

describe("directoryProblem", () => {
  it("asks only whether the directory takes a file, not about the file", async () => {
    expect(await directoryProblem(join(dir, "new.json"))).toBeNull();
    expect(await directoryProblem(file)).toBeNull();
    expect(await directoryProblem(dir)).toBeNull();
  });

  it("refuses a missing directory, and a file where a directory should be", async () => {
    expect(await directoryProblem(join(dir, "none", "out"))).toBe(
      `no such directory: ${join(dir, "none")}`,
    );
    expect(await directoryProblem(join(file, "out"))).toBe(`${file} is not a directory`);
    expect(await directoryProblem(join(file, "sub", "out"))).toMatch(/ is not a directory$/);
  });
});

describe("fileNameProblem", () => {
  it("refuses an empty name, a directory, or a name ending as one, and lets any other name through", async () => {
    expect(await fileNameProblem(dir)).toBe("it is a directory");
    expect(await fileNameProblem(`${join(dir, "none")}/`)).toBe(
      "it names a directory (it ends with /)",
    );
    expect(await fileNameProblem("")).toBe("the name is empty");
    expect(await fileNameProblem(file)).toBeNull();
    expect(await fileNameProblem(join(dir, "none", "out"))).toBeNull();
  });
});
