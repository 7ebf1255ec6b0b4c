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

  test("calls a callback once for each time it waits, also past the waiters it lists", () => {
    for (const times of [3, 40]) {
      const rec = new KeyRecord("x");
      let calls = 0;
      const cb = () => calls++;
      const other: string[] = [];
      for (let i = 0; i < times; i++) rec.onChange(cb);
      rec.onChange(() => other.push("other"));
      rec.offChange(cb);
      rec.offChange(() => {}); // never added: nothing
      rec.finish([], null);
      expect(calls).toBe(times - 1);
      expect(other).toEqual(["other"]);
      rec.reset();
      expect(calls).toBe(times - 1);
    }
  });

  // A pure call submitted many times gives many futures of one key: each waiting,
  // with an array of waiters searched to drop each, a wait timing out (or an
  // asCompleted left) cost O(n²), 160,000 futures taking 38 s; counted, 0.5 s. The
  // bound is under half what the quadratic took, as a loaded host needs several times
  // the quiet one's.
  test("drops 200,000 waiters of one key in linear time", () => {
    const rec = new KeyRecord("x");
    const callbacks = Array.from({ length: 200_000 }, () => () => {});
    for (const cb of callbacks) rec.onChange(cb);
    for (const cb of callbacks) rec.offChange(cb);
    let called = false;
    rec.onChange(() => {
      called = true;
    });
    rec.finish([], null);
    expect(called).toBe(true);
  }, 15_000);
});
