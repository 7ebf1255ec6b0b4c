import { describe, expect, it } from "vitest";
import { ClientClosedError, LostKeyError } from "./errors.ts";
import { Future, type FutureHost } from "./future.ts";
import { type Gatherer, LostFromDiskError } from "./gatherer.ts";
import { KeyRecord } from "./keyRecord.ts";
import { Results } from "./results.ts";

/**
 * Results over a stand-in client and gatherer: records per key as a client keeps
 * them, and a gatherer answering `value of <key>` after failing the keys in
 * `failFetch` once each with the error given.
 */
function setup(failFetch: Map<string, Error> = new Map()) {
  const records = new Map<string, KeyRecord>();
  let closed: Error | null = null;
  // What holds the process (see KeyRecord's holdLoop): a count of the holds not let go.
  let holds = 0;
  const holdLoop = () => {
    holds++;
    return () => {
      holds--;
    };
  };
  const fetched: string[] = [];
  const fetchedMany: string[][] = [];
  const gatherer = {
    fetch: (key: string) => {
      fetched.push(key);
      const err = failFetch.get(key);
      failFetch.delete(key);
      return err === undefined ? Promise.resolve(`value of ${key}`) : Promise.reject(err);
    },
    fetchMany: (keys: readonly string[]) => {
      fetchedMany.push([...keys]);
      const errors = keys.map((k) => failFetch.get(k));
      for (const k of keys) failFetch.delete(k);
      return Promise.resolve({
        values: keys.map((k) => `value of ${k}`),
        errors: errors.some((e) => e !== undefined) ? errors : null,
      });
    },
  } as unknown as Gatherer;
  const results = new Results(
    { record: (key) => records.get(key), closedError: () => closed },
    gatherer,
  );
  const host: FutureHost = {
    id: "fake",
    resultOf: (key, holder) => results.resultOf(key, holder),
    cancelKeys: () => Promise.resolve(),
    retry: () => Promise.resolve([]),
    dropRef: (key) => {
      const rec = records.get(key);
      if (rec !== undefined && --rec.refs === 0) records.delete(key);
    },
    addRef: (key) => {
      let rec = records.get(key);
      if (rec === undefined) records.set(key, (rec = new KeyRecord(key, holdLoop)));
      rec.refs++;
      return rec;
    },
  };
  const future = (key: string) => new Future(host, key);
  const rec = (key: string) => records.get(key) as KeyRecord;
  const close = (e: Error) => {
    closed = e;
  };
  return { results, future, rec, fetched, fetchedMany, close, holds: () => holds };
}

/** Whether `p` has settled after the microtasks queued now ran. */
async function settledYet(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setImmediate(r));
  return settled;
}

describe("Results", () => {
  it("untilDone stops waiting once one future fails, with others still pending", async () => {
    const { results, future, rec } = setup();
    const a = future("a");
    future("b");
    const waiting = results.untilDone([a, future("b")]);
    expect(await settledYet(waiting)).toBe(false);
    rec("a").fail("error", new Error("a failed"));
    expect(await settledYet(waiting)).toBe(true);
  });

  it("untilDone, once one future failed, leaves no wait on the others to hold the process", async () => {
    const { results, future, rec, holds } = setup();
    const a = future("a");
    const b = future("b");
    const waiting = results.untilDone([a, b, b]);
    expect(holds()).toBe(2);
    rec("a").fail("error", new Error("it broke"));
    await waiting;
    // b may never finish (a task that runs for good): a program that gave up on it must end.
    expect(holds()).toBe(0);
    rec("b").finish(["w"], "int");
    expect(holds()).toBe(0);
  });

  it("gather waits for pending futures, then fetches them together", async () => {
    const { results, future, rec, fetched, fetchedMany } = setup();
    const [a, b] = [future("a"), future("b")];
    const gathering = results.gather({ x: [a, 1], y: b });
    rec("a").finish(["w"], null);
    rec("b").finish(["w"], null);
    expect(await gathering).toEqual({ x: ["value of a", 1], y: "value of b" });
    expect(fetchedMany).toEqual([["a", "b"]]);
    expect(fetched).toEqual([]);
  });

  it("gather rejects with the error of a failed future and fetches nothing of it", async () => {
    const { results, future, rec, fetchedMany } = setup();
    const [a, b] = [future("a"), future("b")];
    rec("a").finish(["w"], null);
    rec("b").fail("error", new Error("b failed"));
    await expect(results.gather([a, b])).rejects.toThrow("b failed");
    expect(fetchedMany.flat()).not.toContain("b");
  });

  it("gather fetches again a key whose fetch together failed as lost", async () => {
    const { results, future, rec, fetched } = setup(
      new Map([["b", new LostKeyError("b", "gone")]]),
    );
    const [a, b] = [future("a"), future("b")];
    rec("a").finish(["w"], null);
    rec("b").finish(["w"], null);
    expect(await results.gather([a, b])).toEqual(["value of a", "value of b"]);
    expect(fetched).toEqual(["b"]);
  });

  it("a result lost with its worker is fetched again, even with no news of the key", async () => {
    const { future, rec, fetched, holds } = setup(new Map([["a", new LostKeyError("a", "gone")]]));
    const a = future("a");
    rec("a").finish(["w"], null);
    expect(await a.result()).toBe("value of a");
    expect(fetched).toEqual(["a", "a"]);
    // The wait for news of the key between the fetches is let go: the key held
    // stays finished, and a wait left on it would hold the program for good.
    expect(holds()).toBe(0);
  });

  it("a key still lost after 4 fetches (the scheduler telling nothing of it) rejects with LostKeyError", async () => {
    const lost = new LostKeyError("a", "gone");
    /** Fails the key at every fetch: its entries are never let go. */
    class Always extends Map<string, Error> {
      override delete(): boolean {
        return false;
      }
    }
    const { future, rec, fetched } = setup(new Always([["a", lost]]));
    const a = future("a");
    rec("a").finish(["w"], null);
    const started = Date.now();
    expect(await a.result().catch((e: unknown) => e)).toBe(lost);
    // About half a second between fetches, waiting for news of the key.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(fetched).toEqual(["a", "a", "a", "a"]);
  });

  it("a key lost from disk by its holders is awaited past 4 fetches, until computed again", async () => {
    // Its holders claim it while tasks there read it, which may take long: the scheduler
    // computes it again once they drop it.
    class Always extends Map<string, Error> {
      override delete(): boolean {
        return false;
      }
    }
    const failing = new Always([["a", new LostFromDiskError("a", ["w"])]]);
    const { future, rec, fetched } = setup(failing);
    const a = future("a");
    rec("a").finish(["w"], null);
    const got = a.result();
    await new Promise((r) => setTimeout(r, 2_200));
    expect(await settledYet(got)).toBe(false);
    expect(fetched.length).toBeGreaterThan(4);
    // Dropped by its holder: the scheduler reports it lost (lost-data), then in memory.
    rec("a").reset();
    Map.prototype.delete.call(failing, "a");
    rec("a").finish(["w2"], null);
    expect(await got).toBe("value of a");
  });

  it("a key lost, then computed again meanwhile, comes to the same await", async () => {
    const { future, rec, fetched } = setup(new Map([["a", new LostKeyError("a", "gone")]]));
    const a = future("a");
    rec("a").finish(["w"], null);
    const got = a.result();
    await new Promise((r) => setImmediate(r));
    // The scheduler reports it lost (lost-data), then in memory again.
    rec("a").reset();
    expect(await settledYet(got)).toBe(false);
    rec("a").finish(["w2"], null);
    expect(await got).toBe("value of a");
    expect(fetched).toEqual(["a", "a"]);
  });

  it("a fetch failing otherwise than lost is not tried again", async () => {
    const { future, rec, fetched } = setup(new Map([["a", new Error("unreadable")]]));
    const a = future("a");
    rec("a").finish(["w"], null);
    await expect(a.result()).rejects.toThrow("unreadable");
    expect(fetched).toEqual(["a"]);
  });

  it("untilFinished throws a failed key's own error, even once closed, and a released key's", async () => {
    const { results, future, rec, close } = setup();
    const [a, b] = [future("a"), future("b")];
    rec("a").fail("cancelled", new Error("a cancelled"));
    close(new ClientClosedError("closed"));
    await expect(results.untilFinished([a])).rejects.toThrow("a cancelled");
    rec("b").finish(["w"], null);
    b.release();
    await expect(results.untilFinished([b])).rejects.toThrow("closed");
  });

  it("holds a holder as many times as it is awaited", () => {
    const { results } = setup();
    const holder = {};
    const held = () => (results as unknown as { awaited: Map<object, number> }).awaited.has(holder);
    results.hold(holder);
    results.hold(holder);
    results.unhold(holder);
    expect(held()).toBe(true);
    results.unhold(holder);
    expect(held()).toBe(false);
  });
});
