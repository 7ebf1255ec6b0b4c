import { describe, expect, it } from "vitest";
import { Coordination } from "./coordination.ts";
import { leaseRefreshIntervalMs } from "./leases.ts";
import { replies } from "./testReplies.ts";
import { DEFERRED } from "./waiters.ts";

/** A coordination whose lease clock the test moves, and the warnings it logged. */
function setUp() {
  const { sent, reply } = replies();
  const clock = { t: 0, now: () => clock.t };
  const warnings: string[] = [];
  const c = new Coordination(reply, clock, (_fields, msg) => warnings.push(msg));
  return { c, sent, clock, warnings };
}

const nobodyAlive = () => false;

describe("leases not refreshed within the lease timeout", () => {
  it("expire: a lock goes to the next waiter, and its holder's release is not refused", () => {
    const { c, sent, clock, warnings } = setUp();
    expect(
      c.answer("a", "lock-acquire", { requestId: 1, name: "L", lease: "la", timeoutMs: null }),
    ).toBe(true);
    expect(
      c.answer("b", "lock-acquire", { requestId: 2, name: "L", lease: "lb", timeoutMs: null }),
    ).toBe(DEFERRED);
    clock.t = 300;
    expect(c.expireLeases(300, nobodyAlive)).toEqual([]);
    clock.t = 301;
    expect(c.expireLeases(300, nobodyAlive)).toEqual([
      { kind: "lock", name: "L", lease: "la", client: "a", idleMs: 301 },
    ]);
    expect(sent).toEqual(["b#2=true"]);
    expect(c.locks.leases("L")).toBe(1);
    // The old holder, unaware: let go quietly (Dask warns), not a refusal, and b keeps it.
    expect(c.answer("a", "lock-release", { requestId: 3, name: "L", lease: "la" })).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(c.locks.leases("L")).toBe(1);
    // Released once: a second release is refused, as any release of a lease not held.
    expect(() => c.answer("a", "lock-release", { requestId: 4, name: "L", lease: "la" })).toThrow(
      /is not held/,
    );
  });

  it("are kept while refreshed, and a refresh names those expired", () => {
    const { c, clock } = setUp();
    c.answer("a", "semaphore-acquire", {
      requestId: 1,
      name: "S",
      maxLeases: 2,
      lease: "s1",
      timeoutMs: null,
    });
    c.answer("a", "lock-acquire", { requestId: 2, name: "L", lease: "l1", timeoutMs: null });
    c.answer("a", "multi-lock-acquire", {
      requestId: 3,
      names: ["x", "y"],
      numLocks: 2,
      id: "m1",
      timeoutMs: null,
    });
    for (let t = 100; t <= 3_000; t += 100) {
      clock.t = t;
      const refresh = {
        requestId: 4,
        semaphores: [["S", ["s1"]]],
        locks: [["L", ["l1"]]],
        multiLocks: ["m1"],
      };
      expect(c.answer("a", "lease-refresh", refresh)).toEqual({ gone: [] });
      expect(c.expireLeases(300, nobodyAlive)).toEqual([]);
    }
    clock.t = 3_400;
    expect(c.expireLeases(300, nobodyAlive).map((e) => e.lease)).toEqual(["s1", "l1", "m1"]);
    expect(c.semaphores.leases("S") + c.locks.leases("L")).toBe(0);
    // A refresh after expiry takes nothing back (Dask's would, overbooking the semaphore).
    const late = {
      requestId: 5,
      semaphores: [["S", ["s1"]]],
      locks: [["L", ["l1"]]],
      multiLocks: ["m1"],
    };
    expect(c.answer("a", "lease-refresh", late)).toEqual({ gone: ["s1", "l1", "m1"] });
    expect(c.semaphores.leases("S")).toBe(0);
    expect(
      c.answer("b", "multi-lock-acquire", {
        requestId: 6,
        names: ["x"],
        numLocks: 1,
        id: "m2",
        timeoutMs: 0,
      }),
    ).toBe(true);
    expect(c.answer("a", "multi-lock-release", { requestId: 7, id: "m1" })).toBe(false);
  });

  it("are kept while their client is vouched for (a task's client whose worker heartbeats)", () => {
    const { c, clock } = setUp();
    c.answer("a", "lock-acquire", { requestId: 1, name: "L", lease: "la", timeoutMs: null });
    clock.t = 1_000;
    expect(c.expireLeases(300, (client) => client === "a")).toEqual([]);
    // Vouched for now: counted as refreshed then.
    clock.t = 1_200;
    expect(c.expireLeases(300, nobodyAlive)).toEqual([]);
    clock.t = 1_301;
    expect(c.expireLeases(300, nobodyAlive)).toHaveLength(1);
  });

  it("count from when they were granted, not asked for", () => {
    const { c, sent, clock } = setUp();
    c.answer("a", "lock-acquire", { requestId: 1, name: "L", lease: "la", timeoutMs: null });
    c.answer("b", "lock-acquire", { requestId: 2, name: "L", lease: "lb", timeoutMs: null });
    clock.t = 250;
    c.answer("a", "lock-release", { requestId: 3, name: "L", lease: "la" });
    expect(sent).toEqual(["b#2=true"]);
    clock.t = 500;
    expect(c.expireLeases(300, nobodyAlive)).toEqual([]);
  });

  it("of a client that left are forgotten with it", () => {
    const { c, clock } = setUp();
    c.answer("a", "lock-acquire", { requestId: 1, name: "L", lease: "la", timeoutMs: null });
    clock.t = 400;
    expect(c.expireLeases(300, nobodyAlive)).toHaveLength(1);
    c.clientLeft("a");
    expect(() => c.answer("a", "lock-release", { requestId: 2, name: "L", lease: "la" })).toThrow(
      /is not held/,
    );
  });

  it("are refreshed under any name, `__proto__` and `constructor` too", () => {
    const { c, clock } = setUp();
    c.answer("a", "lock-acquire", {
      requestId: 1,
      name: "__proto__",
      lease: "l1",
      timeoutMs: null,
    });
    c.answer("a", "semaphore-acquire", {
      requestId: 2,
      name: "constructor",
      lease: "s1",
      maxLeases: 1,
      timeoutMs: null,
    });
    clock.t = 200;
    const refresh = {
      requestId: 3,
      locks: [["__proto__", ["l1"]]],
      semaphores: [["constructor", ["s1"]]],
    };
    expect(c.answer("a", "lease-refresh", refresh)).toEqual({ gone: [] });
    clock.t = 400;
    expect(c.expireLeases(300, nobodyAlive)).toEqual([]);
  });

  it("refuse a malformed refresh", () => {
    const { c } = setUp();
    expect(() => c.answer("a", "lease-refresh", { requestId: 1, locks: [["L", [3]]] })).toThrow(
      /lease-refresh: locks\[L\] must be an array of non-empty strings/,
    );
    expect(() => c.answer("a", "lease-refresh", { requestId: 1, locks: { L: ["l"] } })).toThrow(
      /lease-refresh: locks must be an array of \[name, lease ids\] pairs/,
    );
    expect(() => c.answer("a", "lease-refresh", { requestId: 1, multiLocks: "m" })).toThrow(
      /multiLocks must be an array/,
    );
  });
});

describe("leaseRefreshIntervalMs", () => {
  it("is a third of the timeout (Dask's 10 s for 30 s), none when leases never expire", () => {
    expect(leaseRefreshIntervalMs(30_000)).toBe(10_000);
    expect(leaseRefreshIntervalMs(Infinity)).toBeNull();
  });
});
