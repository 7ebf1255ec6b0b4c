import { describe, expect, it } from "vitest";
import { unaskedOf } from "./askedWorkers.ts";

describe("unaskedOf", () => {
  it("names the workers there that were not asked, none when all were or no list is given", () => {
    const there = ["tcp://w:1", "tcp://w:2"];
    expect(unaskedOf("op", there, ["tcp://w:1"])).toEqual({ unasked: ["tcp://w:2"] });
    // Those asked may include workers gone since.
    expect(unaskedOf("op", there, ["tcp://w:0", "tcp://w:2", "tcp://w:1"])).toBeNull();
    expect(unaskedOf("op", there, undefined)).toBeNull();
    expect(unaskedOf("op", [], [])).toBeNull();
  });

  it("refuses a list that is not of addresses, naming the request", () => {
    for (const bad of ["tcp://w:1", [1], null]) {
      expect(() => unaskedOf("load-task-modules", [], bad)).toThrow(
        "load-task-modules: asked must be an array of worker addresses",
      );
    }
  });
});
