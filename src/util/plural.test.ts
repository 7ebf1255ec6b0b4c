import { describe, expect, it } from "vitest";
import { plural } from "./plural.ts";

describe("plural", () => {
  it("says one of it for 1 only", () => {
    expect(plural(1, "worker")).toBe("1 worker");
    expect(plural(2, "worker")).toBe("2 workers");
    expect(plural(0, "worker")).toBe("0 workers");
    expect(plural(3, "stimulus", "stimuli")).toBe("3 stimuli");
  });
});
