import { describe, expect, it } from "vitest";
import { fileModuleUrl } from "./moduleUrl.ts";

describe("fileModuleUrl", () => {
  it("takes a URL object as its href", () => {
    expect(fileModuleUrl(new URL("file:///opt/tasks.js"), "taskModules")).toBe(
      "file:///opt/tasks.js",
    );
  });

  it("refuses an empty text rather than naming the current directory", () => {
    expect(() => fileModuleUrl("", "taskModules")).toThrow(
      new TypeError('taskModules: expected a file URL or path, got ""'),
    );
  });

  it("shows a value JSON cannot (a BigInt) in its refusal rather than failing to", () => {
    expect(() => fileModuleUrl(5n as never, "taskModules")).toThrow(
      new TypeError('taskModules: expected a file URL or path, got "5n"'),
    );
  });

  it("reads a Windows drive path as a path, not as a URL scheme", () => {
    expect(fileModuleUrl("C:\\tasks.js", "taskModules")).toMatch(/^file:\/\/\/.*C:/);
    expect(() => fileModuleUrl("http://host/tasks.js", "taskModules")).toThrow(
      "taskModules: only file URLs and paths are supported, got http://host/tasks.js",
    );
  });
});
