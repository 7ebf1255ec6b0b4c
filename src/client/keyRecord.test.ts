import { describe, expect, test } from "vitest";
import { KeyRecord, type StatusCounts } from "./keyRecord.ts";

describe("KeyRecord", () => {
  test("keeps its client's count of no-worker records through every change of status", () => {
    const counts: StatusCounts = { noWorker: 0 };
    const a = new KeyRecord("a", counts);
    const b = new KeyRecord("b", counts);
    a.fail("no-worker", new Error("no GPU"));
    b.fail("no-worker", new Error("no GPU"));
    expect(counts.noWorker).toBe(2);
    a.fail("no-worker", new Error("still no GPU"));
    expect(counts.noWorker).toBe(2);
    a.reset();
    expect(counts.noWorker).toBe(1);
    a.finish(["w1"], "number");
    b.fail("lost", new Error("released"));
    expect(counts.noWorker).toBe(0);
    b.fail("error", new Error("boom"));
    expect(counts.noWorker).toBe(0);
  });

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
