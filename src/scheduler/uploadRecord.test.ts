import { describe, expect, it } from "vitest";
import type { UploadedFile } from "../protocol/uploads.ts";
import { RequestRefusal } from "./requestRefusal.ts";
import { recordUpload } from "./uploadRecord.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("recordUpload", () => {
  it("records a file unless a worker there was not asked, then naming those", () => {
    const uploads: UploadedFile[] = [];
    const msg = { name: "a.mjs", data: bytes("x"), load: true };
    expect(
      recordUpload(uploads, ["tcp://w:1", "tcp://w:2"], { ...msg, asked: ["tcp://w:1"] }),
    ).toEqual({ unasked: ["tcp://w:2"] });
    expect(uploads).toEqual([]);
    // Those asked may include workers gone since.
    expect(
      recordUpload(uploads, ["tcp://w:1", "tcp://w:2"], {
        ...msg,
        asked: ["tcp://w:0", "tcp://w:1", "tcp://w:2"],
      }),
    ).toEqual(["a.mjs"]);
    // Without the list (an older client), recorded whatever workers there are.
    expect(
      recordUpload(uploads, ["tcp://w:3"], { name: "b.json", data: bytes("{}"), load: false }),
    ).toEqual(["a.mjs", "b.json"]);
    expect(uploads.map((f) => f.name)).toEqual(["a.mjs", "b.json"]);
  });

  it("refuses another file under a name taken before looking at the workers, and takes a load: true after load: false", () => {
    const uploads: UploadedFile[] = [{ name: "a.mjs", data: bytes("x"), load: false }];
    expect(() =>
      recordUpload(uploads, ["tcp://w:2"], {
        name: "a.mjs",
        data: bytes("y"),
        load: true,
        asked: [],
      }),
    ).toThrow(RequestRefusal);
    expect(
      recordUpload(uploads, [], { name: "a.mjs", data: bytes("x"), load: true, asked: [] }),
    ).toEqual(["a.mjs"]);
    expect(uploads[0].load).toBe(true);
  });

  it("refuses a malformed request with a TypeError", () => {
    expect(() => recordUpload([], [], { name: "a.mjs", data: "x", load: true })).toThrow(
      "upload-file: the data of a.mjs must be bytes",
    );
    expect(() =>
      recordUpload([], [], { name: "a.mjs", data: bytes("x"), load: true, asked: "tcp://w:1" }),
    ).toThrow("upload-file: asked must be an array of worker addresses");
  });
});
