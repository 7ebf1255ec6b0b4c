import { describe, expect, test } from "vitest";
import { KeyRecord } from "./keyRecord.ts";

describe("KeyRecord", () => {
  test("wakes the waiters of a change once", async () => {
    const rec = new KeyRecord("x");
    const seen: string[] = [];
    rec.onChange((r) => seen.push(r.status));
    const changed = rec.changed();
    rec.finish(["w1"], null);
    rec.reset();
    await changed;
    expect(seen).toEqual(["finished"]);
  });
});
