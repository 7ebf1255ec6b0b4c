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

  it("with the registrations asked, names a worker restarted at an address asked", () => {
    const there = ["tcp://w:1", "tcp://w:2", "tcp://old:3"];
    const ids: Record<string, string> = { "tcp://w:1": "5", "tcp://w:2": "9" };
    const registered = (askedIds: unknown) => ({ askedIds, idOf: (a: string) => ids[a] });
    // w:2 registered anew (9) after its address was asked (as 6); old:3 has no id: by address.
    const asked = ["tcp://w:1", "tcp://w:2", "tcp://old:3"];
    expect(unaskedOf("op", there, asked, registered(["5", "6"]))).toEqual({
      unasked: ["tcp://w:2"],
    });
    expect(unaskedOf("op", there, asked, registered(["5", "9"]))).toBeNull();
    expect(unaskedOf("op", there, ["tcp://w:1", "tcp://w:2"], registered(["5", "9"]))).toEqual({
      unasked: ["tcp://old:3"],
    });
    // A client naming no registrations: by address, as before.
    expect(unaskedOf("op", there, asked, registered(undefined))).toBeNull();
    expect(() => unaskedOf("upload-file", there, asked, registered("5"))).toThrow(
      "upload-file: askedIds must be an array of worker ids",
    );
  });

  it("refuses a list that is not of addresses, naming the request", () => {
    for (const bad of ["tcp://w:1", [1], null]) {
      expect(() => unaskedOf("load-task-modules", [], bad)).toThrow(
        "load-task-modules: asked must be an array of worker addresses",
      );
    }
  });
});
