import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { SlotGate } from "./slotGate.ts";

describe("SlotGate", () => {
  it("hands out slots up to its size, then in arrival order", async () => {
    const g = new SlotGate(2);
    await g.acquire();
    await g.acquire();
    const order: string[] = [];
    const a = g.acquire().then(() => order.push("a"));
    const b = g.acquire().then(() => order.push("b"));
    expect(g.waiting).toBe(2);
    g.release();
    await a;
    g.release();
    await b;
    expect(order).toEqual(["a", "b"]);
    expect(g.available).toBe(0);
  });

  it("a rejoining task goes before tasks waiting to start", async () => {
    const g = new SlotGate(1);
    await g.acquire();
    const order: string[] = [];
    const start = g.acquire().then(() => order.push("start"));
    const rejoin = g.acquireForRejoin().then(() => order.push("rejoin"));
    g.release();
    await rejoin;
    g.release();
    await start;
    expect(order).toEqual(["rejoin", "start"]);
  });

  it("a free slot does not go to a newcomer while a rejoiner waits", async () => {
    const g = new SlotGate(1);
    await g.acquire();
    const rejoin = g.acquireForRejoin();
    g.release();
    await rejoin;
    expect(g.available).toBe(0);
  });

  it("an aborted wait leaves the queue", async () => {
    const g = new SlotGate(1);
    await g.acquire();
    const ac = new AbortController();
    const p = g.acquire(ac.signal);
    ac.abort(new Error("stop"));
    await expect(p).rejects.toThrow("stop");
    expect(g.waiting).toBe(0);
    g.release();
    expect(g.available).toBe(1);
    await expect(g.acquire(AbortSignal.abort(new Error("early")))).rejects.toThrow("early");
  });

  it("tryAcquire takes a free slot only when nobody waits for one", async () => {
    const g = new SlotGate(1);
    expect(g.tryAcquire()).toBe(true);
    expect(g.tryAcquire()).toBe(false);
    const waiter = g.acquire();
    g.release(); // to the waiter, not to a later tryAcquire
    expect(g.tryAcquire()).toBe(false);
    await waiter;
    g.release();
    const rejoin = g.acquireForRejoin(); // granted at once: a slot is free
    await rejoin;
    expect(g.tryAcquire()).toBe(false);
    g.release();
    expect(g.tryAcquire()).toBe(true);
    expect(g.available).toBe(0);
  });

  it("refuses a release without acquire and bad sizes", () => {
    expect(() => new SlotGate(1).release()).toThrow(/without a matching acquire/);
    expect(() => new SlotGate(0)).toThrow(RangeError);
  });

  it("stops listening to a waiter's signal once it is granted a slot", async () => {
    const gate = new SlotGate(1);
    await gate.acquire();
    const ac = new AbortController();
    const waiting = gate.acquire(ac.signal);
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(1);
    gate.release();
    await waiting;
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
  });
});
