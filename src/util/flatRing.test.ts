import { describe, expect, it } from "vitest";
import { RING_CHUNK, TimedFlatRing } from "./flatRing.ts";

/** The smallest timed ring: one slot (a name) and a time per record. */
class NamedTimes extends TimedFlatRing<[string, number]> {
  constructor(maxlen: number) {
    super(maxlen, 1);
  }

  add(name: string, time: number): void {
    const at = this.claim();
    if (at < 0) return;
    this.slots(at)[this.slot(at)] = name;
    this.setTime(at, time);
  }

  protected read(at: number): [string, number] {
    return [this.slots(at)[this.slot(at)] as string, this.time(at)];
  }
}

describe("FlatRing", () => {
  it("has no record at index length, before and after the ring wraps", () => {
    const r = new NamedTimes(3);
    r.add("a", 1);
    r.add("b", 2);
    expect(r.at(2)).toBeUndefined();
    r.add("c", 3);
    r.add("d", 4); // evicts a; index 3 would wrap onto the oldest
    expect(r.at(3)).toBeUndefined();
    expect(r.at(-1)).toEqual(["d", 4]);
  });

  it("starts again from the first record after clear(), also once it had wrapped", () => {
    const r = new NamedTimes(RING_CHUNK + 2);
    for (let i = 0; i < RING_CHUNK + 5; i++) r.add(`x${i}`, i);
    expect(r.at(0)).toEqual(["x3", 3]);
    r.clear();
    expect(r.length).toBe(0);
    r.add("y", 0.5);
    r.add("z", 1.5);
    expect(r.toArray()).toEqual([
      ["y", 0.5],
      ["z", 1.5],
    ]);
    expect([r.at(0), r.at(-1)]).toEqual([
      ["y", 0.5],
      ["z", 1.5],
    ]);
  });
});
