import { describe, expect, it } from "vitest";
import { ConnectError } from "../comm/errors.ts";
import { actorRef } from "../protocol/actors.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { Actor } from "./actor.ts";
import { LostKeyError, ResultFetchError } from "./errors.ts";
import { Gatherer, type GatherHost, LostFromDiskError } from "./gatherer.ts";

/** A host whose one worker answers `busy` `busyTimes` times, then with the value. */
function busyHost(busyTimes: number) {
  let calls = 0;
  const rpc = {
    comm: {},
    call: async (_op: string, args: { keys: string[] }) => {
      calls++;
      if (calls <= busyTimes) return { status: "busy" };
      return { status: "OK", data: new Map(args.keys.map((k) => [k, `value of ${k}`])) };
    },
  };
  const host: GatherHost = {
    id: "client-test",
    peers: { get: async () => rpc } as unknown as PeerPool,
    holdersOf: () => ["tcp://w:1"],
    whoHas: async (keys) => Object.fromEntries(keys.map((k) => [k, ["tcp://w:1"]])),
    actorHandle: (ref) =>
      new Actor(ref, async () => ({
        callActor: async (address, op, args) => ({ status: "OK", result: { address, op, args } }),
      })),
  };
  return { host, calls: () => calls };
}

/**
 * A host over stand-in workers: `getData(worker, keys, n)` answers the n-th
 * (from 1) `get_data` asked of `worker` (throw to fail it); `holders` are the
 * holders last reported, `whoHas` what the scheduler says now (default: the
 * same). Records each `get_data` and each question to the scheduler.
 */
function workersHost(o: {
  holders: Record<string, string[]>;
  whoHas?: Record<string, string[]> | (() => Promise<Record<string, string[]>>);
  getData: (worker: string, keys: string[], n: number) => unknown;
}) {
  const asked: [string, string[]][] = [];
  const whoHasAsked: string[][] = [];
  const calls = new Map<string, number>();
  const host: GatherHost = {
    id: "client-test",
    peers: {
      get: async (worker: string) => ({
        comm: {},
        call: async (_op: string, args: { keys: string[] }) => {
          const n = (calls.get(worker) ?? 0) + 1;
          calls.set(worker, n);
          asked.push([worker, args.keys]);
          return o.getData(worker, args.keys, n);
        },
      }),
    } as unknown as PeerPool,
    holdersOf: (key) => o.holders[key] ?? [],
    whoHas: async (keys) => {
      whoHasAsked.push([...keys]);
      if (typeof o.whoHas === "function") return o.whoHas();
      const now = o.whoHas ?? o.holders;
      return Object.fromEntries(keys.map((k) => [k, now[k] ?? []]));
    },
    actorHandle: () => {
      throw new Error("no actors here");
    },
  };
  return { host, asked, whoHasAsked };
}

/** An `OK` answer with `value of <key>` for each of `keys`. */
function ok(keys: string[]) {
  return { status: "OK", data: new Map(keys.map((k) => [k, `value of ${k}`])) };
}

describe("Gatherer", () => {
  it("waits for a worker that stays busy (sending other results) instead of calling the key lost", async () => {
    // 30 busy answers: more than the rounds allowed for keys that cannot be found.
    const { host, calls } = busyHost(30);
    const g = new Gatherer(host);
    await expect(g.fetch("x")).resolves.toBe("value of x");
    expect(calls()).toBe(31);
  }, 10_000);

  it("makes an actor's result a handle whose calls go through the client", async () => {
    const { host } = busyHost(0);
    const ref = actorRef("counter-1", "tcp://w:1");
    const rpc = {
      comm: {},
      call: async () => ({ status: "OK", data: new Map([["counter-1", ref]]) }),
    };
    const g = new Gatherer({ ...host, peers: { get: async () => rpc } as unknown as PeerPool });
    const handle = (await g.fetch("counter-1")) as Actor<{ inc(by: number): number }>;
    expect(handle).toBeInstanceOf(Actor);
    expect(handle.key).toBe("counter-1");
    // The fake client echoes what it was asked to send.
    const sent = (await handle.call("inc", 2)) as unknown as Record<string, unknown>;
    expect(sent.address).toBe("tcp://w:1");
    expect(sent.op).toBe("actor_execute");
  });

  it("fetches no keys at once: no values, no errors", async () => {
    const { host, asked } = workersHost({ holders: {}, getData: (_w, keys) => ok(keys) });
    await expect(new Gatherer(host).fetchMany([])).resolves.toEqual({ values: [], errors: null });
    expect(asked).toEqual([]);
  });

  it("asks a worker once for a key wanted twice in one turn, and gives the value to both", async () => {
    const { host, asked } = workersHost({
      holders: { x: ["tcp://w:1"], y: ["tcp://w:1"] },
      getData: (_w, keys) => ok(keys),
    });
    const g = new Gatherer(host);
    const [a, many, b] = await Promise.all([g.fetch("x"), g.fetchMany(["y", "x"]), g.fetch("x")]);
    expect([a, b]).toEqual(["value of x", "value of x"]);
    expect(many.values).toEqual(["value of y", "value of x"]);
    expect(many.errors).toBeNull();
    expect(asked).toEqual([["tcp://w:1", ["x", "y"]]]);
  });

  it("fetches from the reported holder without asking the scheduler", async () => {
    const { host, whoHasAsked } = workersHost({
      holders: { x: ["tcp://w:1"] },
      getData: (_w, keys) => ok(keys),
    });
    await expect(new Gatherer(host).fetch("x")).resolves.toBe("value of x");
    expect(whoHasAsked).toEqual([]);
  });

  it("rejects with the scheduler's error when asking it where a key is fails", async () => {
    const whoHasFailed = new Error("scheduler gone");
    const { host } = workersHost({
      holders: {},
      whoHas: () => Promise.reject(whoHasFailed),
      getData: (_w, keys) => ok(keys),
    });
    await expect(new Gatherer(host).fetch("x")).rejects.toBe(whoHasFailed);
  });

  it("gives up a key no worker holds as lost, saying so, after asking the scheduler again and again", async () => {
    const { host, whoHasAsked } = workersHost({ holders: {}, getData: (_w, keys) => ok(keys) });
    const err = await new Gatherer(host).fetch("x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LostKeyError);
    expect((err as Error).message).toBe("cannot fetch the result of x: no worker holds it");
    expect(whoHasAsked.length).toBeGreaterThan(1);
  });

  it("asks the scheduler where a key went when its holder no longer has it, and fetches it there", async () => {
    const { host, asked } = workersHost({
      holders: { x: ["tcp://old:1"] },
      whoHas: { x: ["tcp://new:1"] },
      getData: (w, keys) => ok(w === "tcp://new:1" ? keys : []),
    });
    await expect(new Gatherer(host).fetch("x")).resolves.toBe("value of x");
    expect(asked.map(([w]) => w)).toEqual(["tcp://old:1", "tcp://new:1"]);
  });

  it("names the worker that no longer holds a key when it is given up", async () => {
    const { host } = workersHost({
      holders: { x: ["tcp://w:1"] },
      getData: () => ok([]),
    });
    await expect(new Gatherer(host).fetch("x")).rejects.toThrow(
      "cannot fetch the result of x: tcp://w:1 no longer holds it",
    );
  });

  it("gives up a key every holder lost from disk, saying so, for the client to await its recomputation", async () => {
    const { host, asked, whoHasAsked } = workersHost({
      holders: { x: ["tcp://w:1"] },
      getData: () => ({ status: "OK", data: new Map(), lost: ["x"] }),
    });
    const err = await new Gatherer(host).fetch("x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LostFromDiskError);
    expect(err).toBeInstanceOf(LostKeyError);
    expect((err as Error).message).toBe(
      "cannot fetch the result of x: its spilled value is gone from disk on tcp://w:1, which " +
        "drop it once the tasks there reading it end, for the scheduler to compute it again",
    );
    // Asking it again would not find it (nor would 19 more rounds): its holder drops it
    // once the tasks there reading it end, however long they take. The scheduler is
    // asked once, for holders the client was not told of.
    expect(asked).toHaveLength(1);
    expect(whoHasAsked).toEqual([["x"]]);
  });

  it("asks the scheduler for other holders of a key its last reported holder lost from disk", async () => {
    // The holders the client knows are those of the key's report: a replica made
    // since (a peer fetched it for a task) is known to the scheduler alone. Given up
    // at once, the key was awaited until a dropped it, however long a task there ran.
    const { host, asked, whoHasAsked } = workersHost({
      holders: { x: ["tcp://a:1"] },
      whoHas: { x: ["tcp://a:1", "tcp://b:1"] },
      getData: (w, keys) =>
        w === "tcp://b:1" ? ok(keys) : { status: "OK", data: new Map(), lost: keys },
    });
    await expect(new Gatherer(host).fetch("x")).resolves.toBe("value of x");
    expect(asked.map(([w]) => w)).toEqual(["tcp://a:1", "tcp://b:1"]);
    expect(whoHasAsked).toEqual([["x"]]);
  });

  it("fetches a key one holder lost from disk from another", async () => {
    // Its holders taken in turn from one picked by the key's length: a first.
    const { host, asked } = workersHost({
      holders: { xx: ["tcp://a:1", "tcp://b:1"] },
      getData: (w, keys) =>
        w === "tcp://b:1" ? ok(keys) : { status: "OK", data: new Map(), lost: keys },
    });
    await expect(new Gatherer(host).fetch("xx")).resolves.toBe("value of xx");
    expect(asked.map(([w]) => w)).toEqual(["tcp://a:1", "tcp://b:1"]);
  });

  it("fails a key at once when its worker names the lost keys otherwise than as a list of keys", async () => {
    const { host } = workersHost({
      holders: { x: ["tcp://w:1"] },
      getData: () => ({ status: "OK", data: new Map(), lost: "x" }),
    });
    await expect(new Gatherer(host).fetch("x")).rejects.toThrow(
      "cannot fetch the result of x: unexpected get_data answer from tcp://w:1: lost is not an array of keys",
    );
  });

  it("names the unreachable holder and why when a key is given up", async () => {
    const { host } = workersHost({
      holders: { x: ["tcp://w:1"] },
      getData: (w) => {
        throw new ConnectError("connection refused", w);
      },
    });
    const err = await new Gatherer(host).fetch("x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LostKeyError);
    expect((err as Error).message).toBe(
      "cannot fetch the result of x: tcp://w:1: connection refused",
    );
  });

  it("fetches a key whose holder was unreachable for some rounds once it answers", async () => {
    const { host, asked } = workersHost({
      holders: { x: ["tcp://w:1"] },
      getData: (w, keys, n) => {
        if (n <= 5) throw new ConnectError("connection refused", w);
        return ok(keys);
      },
    });
    await expect(new Gatherer(host).fetch("x")).resolves.toBe("value of x");
    expect(asked).toHaveLength(6);
  });

  it.each([
    ["first", ["tcp://down:1", "tcp://up:1"]],
    ["second", ["tcp://up:1", "tcp://down:1"]],
  ])("tries the other holder of a key when the %s one is unreachable", async (_, holders) => {
    const { host } = workersHost({
      holders: { x: holders },
      getData: (w, keys) => {
        if (w === "tcp://down:1") throw new ConnectError("connection refused", w);
        return ok(keys);
      },
    });
    await expect(new Gatherer(host).fetch("x")).resolves.toBe("value of x");
  });

  it("gives up a key answered busy once and then missing, as lost", async () => {
    const { host } = workersHost({
      holders: { x: ["tcp://w:1"] },
      getData: (_w, _keys, n) => (n === 1 ? { status: "busy" } : ok([])),
    });
    await expect(new Gatherer(host).fetch("x")).rejects.toThrow(
      "cannot fetch the result of x: tcp://w:1 no longer holds it",
    );
  });

  it("waits for a busy holder even while a key fetched with it is given up as lost", async () => {
    const { host } = workersHost({
      holders: { x: ["tcp://busy:1"], y: [] },
      getData: (_w, keys, n) => (n <= 30 ? { status: "busy" } : ok(keys)),
    });
    const g = new Gatherer(host);
    const [x, y] = await Promise.allSettled([g.fetch("x"), g.fetch("y")]);
    expect(x).toEqual({ status: "fulfilled", value: "value of x" });
    expect(y.status === "rejected" && y.reason).toBeInstanceOf(LostKeyError);
  }, 10_000);

  it("fails only the key whose value the worker cannot send, with the worker's error as the cause", async () => {
    const cannotSend = new Error("value of bad cannot be sent");
    const { host } = workersHost({
      holders: { a: ["tcp://w:1"], bad: ["tcp://w:1"], c: ["tcp://w:1"] },
      getData: (_w, keys) => {
        if (keys.includes("bad")) throw cannotSend;
        return ok(keys);
      },
    });
    const g = new Gatherer(host);
    const got = await g.fetchMany(["a", "bad", "c"]);
    expect(got.values).toEqual(["value of a", undefined, "value of c"]);
    const err = got.errors?.[1];
    expect(err).toBeInstanceOf(ResultFetchError);
    expect(err?.message).toBe("cannot fetch the result of bad: value of bad cannot be sent");
    expect(err?.cause).toBe(cannotSend);
    expect(got.errors?.filter((e) => e !== undefined)).toHaveLength(1);
  });

  it("fails every wait for a key wanted several times in one turn when it cannot be fetched", async () => {
    const cannotSend = new Error("value of bad cannot be sent");
    const { host, asked } = workersHost({
      holders: { bad: ["tcp://w:1"] },
      getData: () => {
        throw cannotSend;
      },
    });
    const g = new Gatherer(host);
    const [a, b, many] = await Promise.allSettled([
      g.fetch("bad"),
      g.fetch("bad"),
      g.fetchMany(["bad"]),
    ]);
    for (const got of [a, b]) {
      expect(got.status === "rejected" && got.reason).toBeInstanceOf(ResultFetchError);
    }
    expect(many.status === "fulfilled" && many.value.errors?.[0]).toBeInstanceOf(ResultFetchError);
    expect(asked).toHaveLength(1);
  });

  it("looks elsewhere for a key found missing while its worker's error is narrowed down", async () => {
    // Asked for [a, bad], the worker fails; asked for [a] alone, it no longer has a.
    const { host } = workersHost({
      holders: { a: ["tcp://w:1"], bad: ["tcp://w:1"] },
      whoHas: { a: ["tcp://w:2"], bad: ["tcp://w:1"] },
      getData: (w, keys) => {
        if (keys.includes("bad")) throw new Error("cannot send bad");
        return ok(w === "tcp://w:2" ? keys : []);
      },
    });
    const got = await new Gatherer(host).fetchMany(["a", "bad"]);
    expect(got.values[0]).toBe("value of a");
    expect(got.errors?.[1]).toBeInstanceOf(ResultFetchError);
  });

  it("fails a key at once, naming the fault, when its worker's answer makes no sense", async () => {
    const { host, asked } = workersHost({
      holders: { x: ["tcp://w:1"] },
      getData: () => ({ status: "weird" }),
    });
    const err = await new Gatherer(host).fetch("x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LostKeyError);
    expect((err as Error).message).toBe(
      'cannot fetch the result of x: unexpected get_data answer from tcp://w:1: status "weird"',
    );
    expect(asked).toHaveLength(1);
  });
});
