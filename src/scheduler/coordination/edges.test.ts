import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_TIMER_MS } from "../../util/timers.ts";
import { Coordination } from "./coordination.ts";
import { Events } from "./events.ts";
import { MultiLocks } from "./multiLocks.ts";
import { Queues } from "./queues.ts";
import { Semaphores } from "./semaphores.ts";
import { replies } from "./testReplies.ts";
import { Variables } from "./variables.ts";
import { DEFERRED } from "./waiters.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("a request that may not wait (timeoutMs 0)", () => {
  it("is answered at once, not later by a timer", () => {
    const { sent, reply } = replies();
    expect(new Variables(reply).get("a", 1, "V", 0)).toEqual({ timedOut: true });
    expect(new Events(reply).wait("a", 2, "E", 0)).toBe(false);
    expect(new Queues(reply).get("a", 3, "Q", 0, 0)).toEqual({ timedOut: true });
    expect(sent).toEqual([]);
  });

  it("leaves no queue behind: the name may be used again with another maxsize", () => {
    const { reply } = replies();
    const q = new Queues(reply);
    expect(q.get("a", 1, "Q", 0, 0)).toEqual({ timedOut: true });
    expect(q.put("a", 2, "Q", 5, "x", null, null)).toEqual({ ok: true });
    expect(q.get("a", 3, "Q", 5, 0)).toEqual({ value: "x" });
  });
});

describe("a waiting request answered before its timeout", () => {
  it("is answered once: its timer goes with it", () => {
    vi.useFakeTimers();
    const { sent, reply } = replies();
    const v = new Variables(reply);
    expect(v.get("a", 1, "V", 100)).toBe(DEFERRED);
    v.set("V", 7, null);
    vi.advanceTimersByTime(200);
    expect(sent).toEqual(['a#1={"value":7}']);
  });
});

describe("a client leaving with puts waiting", () => {
  it("hands back the datasets of its dropped puts in the order they were put", () => {
    const { reply } = replies();
    const q = new Queues(reply);
    expect(q.put("a", 1, "Q", 1, "x", null, null)).toEqual({ ok: true });
    expect(q.put("b", 2, "Q", 1, "y", "held-1", null)).toBe(DEFERRED);
    expect(q.put("a", 3, "Q", 1, "z", null, null)).toBe(DEFERRED);
    expect(q.put("b", 4, "Q", 1, "w", "held-2", null)).toBe(DEFERRED);
    expect(q.clientLeft("b")).toEqual(["held-1", "held-2"]);
  });
});

describe("a semaphore's lease", () => {
  it("is refused when asked for again while held, and still counts once", () => {
    const { reply } = replies();
    const s = new Semaphores(reply);
    expect(s.acquire("a", 1, "S", 2, "l1", null)).toBe(true);
    expect(() => s.acquire("b", 2, "S", 2, "l1", null)).toThrow(/lease l1 of "S" is held already/);
    expect(s.leases("S")).toBe(1);
  });
});

describe("a coordination request's timeoutMs", () => {
  it("is refused beyond what a timer can wait, which would fire at once", () => {
    const c = new Coordination(() => true);
    const wait = (timeoutMs: unknown) =>
      c.answer("a", "event-wait", { op: "event-wait", requestId: 1, name: "E", timeoutMs });
    expect(() => wait(MAX_TIMER_MS + 1)).toThrow(
      "event-wait: timeoutMs must be null or a number of milliseconds ≥ 0",
    );
    expect(wait(MAX_TIMER_MS)).toBe(DEFERRED);
    c.dropAll();
  });
});

describe("a variable set while gets wait", () => {
  it("answers them and keeps nothing of them", () => {
    const { sent, reply } = replies();
    const v = new Variables(reply);
    expect(v.get("a", 1, "V", null)).toBe(DEFERRED);
    v.set("V", 1, null);
    expect(sent).toEqual(['a#1={"value":1}']);
    // A name set once and never waited for again would otherwise keep its empty waiters.
    expect((v as unknown as { waiting: Map<string, unknown> }).waiting.size).toBe(0);
  });
});

describe("a queue's get-batch", () => {
  it("is refused with another maxsize than the queue's, as a get is", () => {
    const { reply } = replies();
    const q = new Queues(reply);
    expect(q.put("a", 1, "Q", 2, "x", null, null)).toEqual({ ok: true });
    expect(() => q.getBatch("a", "Q", 3, null)).toThrow('queue "Q" has maxsize 2, not 3');
    expect(q.getBatch("a", "Q", 2, null)).toEqual(["x"]);
  });
});

describe("a multi-lock request still waiting", () => {
  it("is not released: the release is refused and the request still waits", () => {
    const { sent, reply } = replies();
    const m = new MultiLocks(reply);
    expect(m.acquire("a", 1, ["x"], 1, "r1", null)).toBe(true);
    expect(m.acquire("b", 2, ["x"], 1, "r2", null)).toBe(DEFERRED);
    expect(() => m.release("r2")).toThrow(/multi-lock r2 is not held/);
    m.release("r1");
    expect(sent).toEqual(["b#2=true"]);
  });
});

describe("a variable's value replaced or deleted", () => {
  it("hands its dataset to the server to let go, whoever asked, once", () => {
    const c = new Coordination(() => true);
    const set = (held: string | null) =>
      c.answer("a", "variable-set", {
        op: "variable-set",
        requestId: 1,
        name: "V",
        value: 1,
        held,
      });
    expect(set("held-1")).toBe(null);
    expect(c.takeDatasetsToLetGo()).toEqual([]);
    set(null);
    expect(c.takeDatasetsToLetGo()).toEqual(["held-1"]);
    set("held-2");
    expect(c.takeDatasetsToLetGo()).toEqual([]);
    expect(
      c.answer("b", "variable-delete", { op: "variable-delete", requestId: 2, name: "V" }),
    ).toBe(null);
    expect(c.takeDatasetsToLetGo()).toEqual(["held-2"]);
    expect(c.takeDatasetsToLetGo()).toEqual([]);
    expect(() => set("")).toThrow("variable-set: held must be a non-empty string");
  });
});

describe("a queue's items taken", () => {
  it("are handed back at their taker's leaving until it says it let their datasets go", () => {
    const { reply } = replies();
    const q = new Queues(reply);
    q.put("a", 1, "Q", 0, "x", "held-1", null);
    q.put("a", 2, "Q", 0, "y", null, null);
    q.put("a", 3, "Q", 0, "z", "held-2", null);
    q.put("a", 4, "Q", 0, "w", "held-3", null);
    expect(q.get("b", 5, "Q", 0, null)).toEqual({ value: "x" });
    expect(q.getBatch("b", "Q", 0, 2)).toEqual(["y", "z"]);
    // A get waiting when the put comes takes the item straight away.
    expect(q.get("c", 6, "Q", 0, null)).toEqual({ value: "w" });
    expect(q.get("c", 7, "Q", 0, null)).toBe(DEFERRED);
    q.put("a", 8, "Q", 0, "v", "held-4", null);
    q.datasetGone("held-2");
    expect(q.clientLeft("a")).toEqual([]);
    expect(q.clientLeft("b")).toEqual(["held-1"]);
    expect(q.clientLeft("c")).toEqual(["held-3", "held-4"]);
    expect(q.clientLeft("b")).toEqual([]);
  });
});

describe("a queue put that finds no room in time", () => {
  it("hands its dataset back at its client's leaving until the client says it let it go", () => {
    vi.useFakeTimers();
    const { sent, reply } = replies();
    const q = new Queues(reply);
    expect(q.put("a", 1, "Q", 1, "x", null, null)).toEqual({ ok: true });
    expect(q.put("b", 2, "Q", 1, "y", "held-1", 100)).toBe(DEFERRED);
    expect(q.put("b", 3, "Q", 1, "z", "held-2", 0)).toEqual({ timedOut: true });
    vi.advanceTimersByTime(200);
    expect(sent).toEqual(['b#2={"timedOut":true}']);
    // Told it timed out, the client lets the dataset go; one that leaves first (its
    // answer on its way, its process killed) left it, and its keys, held for good.
    q.datasetGone("held-2");
    expect(q.clientLeft("b")).toEqual(["held-1"]);
    expect(q.clientLeft("b")).toEqual([]);
  });
});
