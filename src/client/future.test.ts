import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { ClientClosedError } from "./errors.ts";
import { Future, type FutureHost } from "./future.ts";
import { KeyRecord } from "./keyRecord.ts";

/**
 * A client stand-in sharing one record per key, as a client does, and counting
 * what its futures ask of it: the future alone, without a cluster's timing.
 */
function fakeHost(): FutureHost & {
  records: Map<string, KeyRecord>;
  drops: string[];
  fetches: string[];
} {
  const records = new Map<string, KeyRecord>();
  const drops: string[] = [];
  const fetches: string[] = [];
  return {
    id: "fake",
    records,
    drops,
    fetches,
    resultOf: (key) => {
      fetches.push(key);
      return Promise.resolve(`result of ${key}`);
    },
    cancelKeys: () => Promise.resolve(),
    retry: () => Promise.resolve([]),
    dropRef: (key) => {
      drops.push(key);
    },
    addRef: (key) => {
      let rec = records.get(key);
      if (rec === undefined) records.set(key, (rec = new KeyRecord(key)));
      rec.refs++;
      return rec;
    },
  };
}

describe("Future", () => {
  it("console.log shows its key and status, not its client's internals", () => {
    const host = fakeHost();
    const f = new Future(host, "inc-1");
    expect(inspect(f)).toBe("<Future inc-1 pending>");
    host.records.get("inc-1")?.finish(["w"], "number");
    expect(inspect([f])).toBe("[ <Future inc-1 finished> ]");
  });

  it("whenDone keeps waiting through a reset while pending, and calls back once the key is done", () => {
    const host = fakeHost();
    const f = new Future(host, "k");
    const rec = host.records.get("k") as KeyRecord;
    let calls = 0;
    f.whenDone(() => calls++);
    rec.reset();
    expect(calls).toBe(0);
    rec.finish(["w"], "number");
    expect(calls).toBe(1);
    rec.reset();
    rec.finish(["w"], "number");
    expect(calls).toBe(1);
  });

  it("whenDone calls back on releasing the future while another future keeps its key pending", () => {
    const host = fakeHost();
    const f = new Future(host, "k");
    const other = new Future(host, "k");
    let calls = 0;
    f.whenDone(() => calls++);
    f.release();
    expect(calls).toBe(1);
    expect(other.status).toBe("pending");
    expect(f.done).toBe(true);
  });

  it("a wait stopped by another waiter of the same change is not called back", () => {
    const host = fakeHost();
    const a = new Future(host, "k");
    const b = new Future(host, "k");
    const rec = host.records.get("k") as KeyRecord;
    let bCalls = 0;
    let stopB = (): void => {};
    // As `wait(…, { returnWhen: "first" })` does: the first one done stops the others.
    a.whenDone(() => stopB());
    stopB = b.whenDone(() => bCalls++);
    rec.finish(["w"], null);
    expect(bCalls).toBe(0);
    stopB();
    b.release();
    expect(bCalls).toBe(0);
  });

  it("a released future has no failure, fetches nothing, and gives its reference back once", async () => {
    const host = fakeHost();
    const f = new Future(host, "k");
    const other = new Future(host, "k");
    (host.records.get("k") as KeyRecord).fail("error", new Error("boom"));
    expect(f.failure?.message).toBe("boom");
    f.release();
    f.release();
    expect(f.status).toBe("released");
    expect(f.failure).toBeNull();
    expect(host.drops).toEqual(["k"]);
    await expect(f.result()).rejects.toThrow(ClientClosedError);
    await expect(f.result()).rejects.toThrow("the future of k was released");
    expect(host.fetches).toEqual([]);
    expect(await other.result()).toBe("result of k");
    expect(host.fetches).toEqual(["k"]);
  });

  it("exception waits for a pending key to fail or finish", async () => {
    const host = fakeHost();
    const f = new Future(host, "k");
    const g = new Future(host, "j");
    const failing = f.exception();
    const finishing = g.exception();
    (host.records.get("k") as KeyRecord).fail("cancelled", new Error("cancelled k"));
    (host.records.get("j") as KeyRecord).finish(["w"], null);
    expect((await failing)?.message).toBe("cancelled k");
    expect(await finishing).toBeNull();
  });
});
