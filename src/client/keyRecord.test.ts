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

  test("settled resolves at once for every status but pending", async () => {
    const rec = new KeyRecord("x");
    rec.fail("error", new Error("failed"));
    await rec.settled();
    rec.fail("no-worker", new Error("no worker"));
    await rec.settled();
    expect(rec.status).toBe("no-worker");
  });

  test("a failure leaves no holders, and any news ends an unsent submission's mark", () => {
    const rec = new KeyRecord("x");
    rec.finish(["w1", "w2"], "number");
    rec.fail("lost", new Error("lost"));
    expect(rec.holders).toEqual([]);
    rec.unsent = true;
    rec.asks = 2;
    rec.reset();
    expect(rec.unsent).toBe(false);
    expect(rec.asks).toBe(0);
  });
});
