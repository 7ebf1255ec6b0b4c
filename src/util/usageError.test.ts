import { CommanderError, InvalidArgumentError } from "commander";
import { describe, expect, it } from "vitest";
import { exitCodeOf, UsageError } from "./usageError.ts";

describe("exitCodeOf", () => {
  it("is 2 for a usage error, commander's refusals included; 1 for any other error", () => {
    expect(exitCodeOf(new UsageError("--runs must be a positive integer"))).toBe(2);
    expect(exitCodeOf(new CommanderError(1, "commander.unknownOption", "unknown option"))).toBe(2);
    expect(exitCodeOf(new InvalidArgumentError("expected a number"))).toBe(2);
    expect(exitCodeOf(new Error("wrong answer"))).toBe(1);
    expect(exitCodeOf(new RangeError("Maximum call stack size exceeded"))).toBe(1);
    expect(exitCodeOf("thrown text")).toBe(1);
  });

  it("is 0 for commander's --help and --version", () => {
    expect(exitCodeOf(new CommanderError(0, "commander.helpDisplayed", "(outputHelp)"))).toBe(0);
    expect(exitCodeOf(new CommanderError(0, "commander.version", "0.1.0"))).toBe(0);
  });
});
