import { describe, expect, it } from "vitest";
import {
  defineTask,
  getTaskFunction,
  lookupTaskFunction,
  taskFunctionNames,
  UnknownTaskFunctionError,
} from "./taskRegistry.ts";

describe("task registry", () => {
  it("registers functions by name", () => {
    const def = defineTask("registry-test-double", (x: number) => x * 2);
    expect(def.name).toBe("registry-test-double");
    expect(def.fn(4)).toBe(8);
    expect(getTaskFunction("registry-test-double")).toBe(def.fn);
    expect(lookupTaskFunction("registry-test-double")).toBe(def.fn);
    expect(taskFunctionNames()).toContain("registry-test-double");
  });

  it("refuses duplicates, bad names and non-functions", () => {
    defineTask("registry-test-dup", () => 1);
    expect(() => defineTask("registry-test-dup", () => 2)).toThrow(/already defined/);
    expect(() => defineTask("", () => 1)).toThrow(/non-empty string/);
    expect(() => defineTask(1n as never, () => 1)).toThrow(
      'defineTask: the name must be a non-empty string, got "1n"',
    );
    expect(() => defineTask("registry-test-nofn", 3 as unknown as () => unknown)).toThrow(
      /expected a function/,
    );
  });

  it("an unknown name fails with the names that are defined", () => {
    expect(getTaskFunction("registry-test-nothing")).toBeUndefined();
    expect(() => lookupTaskFunction("registry-test-nothing")).toThrow(UnknownTaskFunctionError);
    expect(() => lookupTaskFunction("registry-test-nothing")).toThrow(
      /defined: .*registry-test-double/,
    );
  });
});
