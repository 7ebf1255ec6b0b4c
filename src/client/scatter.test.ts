import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import { CommClosedError, ConnectError } from "../comm/errors.ts";
import { RemoteError } from "../comm/rpc.ts";
import type { WorkerIdentity } from "../protocol/messagesSession.ts";
import { SCATTERED_DATA_LOST } from "../scheduler/state/transitions.ts";
import { getAddressHost } from "../util/address.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import { UpdateDataEvent } from "../worker/state/events.ts";
import { CancelledError, ClientClosedError, ScatterError } from "./errors.ts";
import type { Future } from "./future.ts";
import type { LocalCluster } from "./localCluster.ts";
import { Scatterer, scatterOptionsProblem } from "./scatter.ts";
import { closeTestClusters, eventually, extraWorker, testCluster } from "./testCluster.ts";
import { add, byteSum, inc, sum } from "./testTasks.ts";

afterEach(closeTestClusters);

/** The worker addresses holding each future's key, as the scheduler has them. */
function holders(cluster: LocalCluster, fs: readonly Future[]): string[][] {
  return fs.map((f) =>
    [...(cluster.scheduler.state.tasks.get(f.key)?.whoHas ?? [])].map((ws) => ws.address),
  );
}

describe("scatter", () => {
  it("puts values on the workers, spread by threads, and tasks take them as inputs", async () => {
    const { cluster, client } = await testCluster({ workers: 2, threadsPerWorker: 2 });
    const fs = await client.scatter([1, 2, 3, 4]);
    expectTypeOf(fs).toEqualTypeOf<Future<number>[]>();
    expect(fs.map((f) => f.status)).toEqual(["finished", "finished", "finished", "finished"]);
    expect(fs[0].key).toMatch(/^number-[0-9a-f-]{36}$/);
    expect(await client.gather(fs)).toEqual([1, 2, 3, 4]);
    // Each worker as often as it has threads: two values each.
    const spread = holders(cluster, fs).map((h) => h.join());
    const counts = new Map<string, number>();
    for (const h of spread) counts.set(h, (counts.get(h) ?? 0) + 1);
    expect([...counts.values()]).toEqual([2, 2]);
    // The worker state machines hold them as scatters.
    const w = cluster.workers.find((x) => x.address === spread[0]);
    expect(w?.state.tasks.get(fs[0].key)?.state).toBe("memory");
    expect(w?.state.stimulusLog.toArray().some((ev) => ev instanceof UpdateDataEvent)).toBe(true);

    expect(await client.submit(inc, fs[0])).toBe(2);
    expect(await client.submit(sum, fs)).toBe(10);
    expect(await client.gather(client.map(inc, fs))).toEqual([2, 3, 4, 5]);
  });

  it("an object gives futures under the same names; values are copies", async () => {
    const { client } = await testCluster();
    const data = { xs: new Uint8Array([1, 2, 3]), n: 5, nested: { a: [1, { b: 2 }] } };
    const fs = await client.scatter(data);
    expect(Object.keys(fs)).toEqual(["xs", "n", "nested"]);
    expectTypeOf(fs.xs).toEqualTypeOf<Future<typeof data.xs>>();
    expectTypeOf(fs.n).toEqualTypeOf<Future<number>>();
    expect(fs.xs.key).toMatch(/^Uint8Array-/);
    data.xs[0] = 100; // the workers hold a copy, as they would over TCP
    expect(await client.submit(byteSum, fs.xs)).toBe(6);
    expect(await client.submit(add, fs.n, 1)).toBe(6);
    expect(await fs.nested).toEqual({ a: [1, { b: 2 }] });
    expect(await client.scatter([])).toEqual([]);
    expect(await client.scatter({})).toEqual({});
  });

  it("broadcast puts every value on every worker; workers= limits where they go", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const all = await client.scatter(["a", "b"], { broadcast: true });
    for (const h of holders(cluster, all))
      expect(h.sort()).toEqual(cluster.workers.map((w) => w.address).sort());

    const target = cluster.workers[1].address;
    const some = await client.scatter([1, 2, 3], { workers: target });
    expect(holders(cluster, some)).toEqual([[target], [target], [target]]);
    const byHost = await client.scatter([4], {
      workers: [getAddressHost(target)],
      broadcast: true,
    });
    expect(holders(cluster, byHost)[0].length).toBe(3); // every worker is on that host
  });

  it("consecutive scatters take turns over the workers", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    const a = await client.scatter([1]);
    const b = await client.scatter([2]);
    expect(holders(cluster, [a[0], b[0]]).flat().sort()).toEqual(
      cluster.workers.map((w) => w.address).sort(),
    );
  });

  it("releasing the futures frees the values on the workers", async () => {
    const { cluster, client } = await testCluster();
    const fs = await client.scatter([1, 2]);
    const keys = fs.map((f) => f.key);
    for (const f of fs) f.release();
    await eventually(
      () =>
        keys.every(
          (k) =>
            !cluster.scheduler.state.tasks.has(k) &&
            cluster.workers.every((w) => !w.state.tasks.has(k)),
        ),
      5000,
      "the scattered keys forgotten everywhere",
    );
  });

  it("closing the client mid-scatter leaves no value behind on the workers", async () => {
    // Each delay stops the scatter at another point: before, while or after the
    // workers store the values, or while the scheduler registers them.
    for (const delay of [0, 1, 2, 5, 10, 20, 50, 300]) {
      const { cluster, client } = await testCluster({ workers: 3 });
      const values = Array.from({ length: 60 }, (_, i) => new Float64Array(2_000).fill(i));
      const scattering = client.scatter(values).then(
        () => "scattered",
        (e: unknown) => (e instanceof Error ? e.name : String(e)),
      );
      await sleep(delay);
      await client.close();
      expect(["scattered", "ClientClosedError"]).toContain(await scattering);
      await eventually(
        () =>
          cluster.scheduler.state.tasks.size === 0 &&
          cluster.workers.every((w) => w.state.data.size === 0 && w.state.tasks.size === 0),
        5000,
        `no value left after a close ${delay} ms into the scatter (${cluster.workers.map((w) => w.state.data.size).join(", ")} values on the workers)`,
      );
      await cluster.close();
    }
  });

  it("closing the client stops a scatter waiting for a worker, and returns once it has", async () => {
    const { client } = await testCluster({ workers: 0 });
    let outcome: unknown = "waiting";
    const scattering = client.scatter([1], { timeoutMs: 60_000 }).catch((err: unknown) => {
      outcome = err;
    });
    await client.close("done");
    // Settled before close returned: not left polling for a worker for a minute.
    expect(outcome).toBeInstanceOf(ClientClosedError);
    expect((outcome as Error).message).toBe("the client was closed: done");
    await scattering;
  });

  it("losing the only holder cancels the futures and the tasks waiting for them", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    const w2 = await extraWorker(cluster, { resources: { R: 1 } });
    try {
      const [x] = await client.scatter([1], { workers: [cluster.workers[0].address] });
      const y = client.submitWith({ resources: { R: 1 } }, add, x, client.submit(inc, 0));
      await cluster.workers[0].close();
      await expect(x.result()).rejects.toThrow(CancelledError);
      await expect(x.result()).rejects.toThrow(SCATTERED_DATA_LOST);
      await expect(y.result()).rejects.toThrow(CancelledError);
      expect(x.status).toBe("cancelled");
    } finally {
      await w2.close();
    }
  });

  it("a value whose workers all left before the scheduler heard of it is scattered again", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    const [w1, w2] = cluster.workers;
    // The scheduler loses w1 just before it handles the update-data: w1's value is
    // rejected (its workers are gone), and the client puts it elsewhere.
    const state = cluster.scheduler.state;
    const handle = state.handleStimuli.bind(state);
    let removed = false;
    state.handleStimuli = (events) => {
      const registering = events.some(
        (ev) => ev.kind === "client-message" && ev.msg.op === "update-data",
      );
      if (!registering || removed) return handle(events);
      removed = true;
      const lost = handle([{ kind: "remove-worker", worker: w1.address, stimulusId: "test" }]);
      return [...lost, ...handle(events)];
    };
    const fs = await client.scatter([1, 2], { workers: [w1.address, w2.address] });
    expect(removed).toBe(true);
    for (const f of fs) expect(client.holdersOf(f.key)).toEqual([w2.address]);
    expect(await client.gather(fs)).toEqual([1, 2]);
    state.handleStimuli = handle;
    await w1.close();
  });

  it("waits for a worker to join, as Dask's scatter does", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    await cluster.workers[0].close();
    await eventually(() => cluster.scheduler.state.workers.size === 0, 5000, "worker gone");
    const scattered = client.scatter([5]);
    await sleep(300);
    const late = await extraWorker(cluster);
    try {
      const [f] = await scattered;
      expect(client.holdersOf(f.key)).toEqual([late.address]);
      expect(await client.submit(inc, f)).toBe(6);
    } finally {
      await late.close();
    }
  });

  it("refuses bad input with a clear error, and fails without workers", async () => {
    const { cluster, client } = await testCluster({ workers: 1 });
    await expect(client.scatter(5 as never)).rejects.toThrow(
      "scatter: expected an array or a plain object of values, got number; to scatter one value: const [future] = await client.scatter([value])",
    );
    await expect(client.scatter(new Map() as never)).rejects.toThrow("got a Map");
    await expect(client.scatter([() => 1])).rejects.toThrow(
      /^scatter: value 0 \(function\) cannot be sent to a worker: /,
    );
    await expect(client.scatter([1], { workers: [] })).rejects.toThrow(
      "scatter: workers must be a non-empty array of worker addresses, hosts or names, got []",
    );
    await expect(client.scatter([1], { broadcast: "yes" as never })).rejects.toThrow(
      'scatter: broadcast must be a boolean, got "yes"',
    );
    await expect(client.scatter([1], { timeoutMs: 0 })).rejects.toThrow(
      "scatter: timeoutMs must be a number > 0 and at most 2147483647, got 0",
    );
    await expect(
      client.scatter([1], { workers: ["inproc://nowhere/9"], timeoutMs: 100 }),
    ).rejects.toThrow(
      new ScatterError(
        `scatter: none of the workers inproc://nowhere/9 is running within 100 ms (running: ${cluster.workers[0].address})`,
      ),
    );
    await cluster.workers[0].close();
    await eventually(() => cluster.scheduler.state.workers.size === 0, 5000, "worker gone");
    await expect(client.scatter([1], { timeoutMs: 100 })).rejects.toThrow(
      "scatter: no running worker to put the values on within 100 ms (start one, or wait with client.waitForWorkers)",
    );
    // Nothing to put: no worker needed.
    expect(await client.scatter([], { timeoutMs: 100 })).toEqual([]);
    expect(await client.scatter({}, { timeoutMs: 100 })).toEqual({});
    await client.close();
    await expect(client.scatter([1])).rejects.toThrow("the client was closed");
  });

  it("a timeout names the wait asked for, however long the scatter took to start", async () => {
    const { client } = await testCluster({ workers: 0 });
    // Every reading of the clock 3 ms later: the scatter's own steps take time.
    let t = Date.now();
    const clock = vi.spyOn(Date, "now").mockImplementation(() => {
      t += 3;
      return t;
    });
    try {
      await expect(client.scatter([1], { timeoutMs: 100 })).rejects.toThrow(
        "scatter: no running worker to put the values on within 100 ms (start one, or wait with client.waitForWorkers)",
      );
    } finally {
      clock.mockRestore();
    }
  });

  it("a value a worker cannot store fails the scatter, and the values stored are released", async () => {
    const { cluster, client } = await testCluster({ workers: 2 });
    const [w1, w2] = cluster.workers;
    const store = w2.state.data as Map<string, unknown>;
    store.set = () => {
      throw new RangeError("no room");
    };
    const err = await client
      .scatter([1, 2], { workers: [w1.address, w2.address] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScatterError);
    expect((err as Error).message).toMatch(
      /^scatter: inproc:\/\/\S+ could not store value \d: RangeError: no room$/,
    );
    // Nothing is left behind: not the value w1 stored, not the erred task on w2.
    await eventually(
      () =>
        cluster.scheduler.state.tasks.size === 0 &&
        w1.state.tasks.size === 0 &&
        w2.state.tasks.size === 0,
      5000,
      "the stored value released",
    );
    expect(client.keyCount).toBe(0);
  });

  it("over TCP", async () => {
    const { cluster, client } = await testCluster({ protocol: "tcp", workers: 2 });
    const fs = await client.scatter({ big: new Float64Array(100_000).fill(0.5), n: 3n });
    expect(fs.big.key).toMatch(/^Float64Array-/);
    expect(((await fs.big) as Float64Array).length).toBe(100_000);
    expect(await fs.n).toBe(3n);
    // As in process: the value is named (the wire's own error does not say which).
    await expect(client.scatter([1, Symbol("s")])).rejects.toThrow(
      /^scatter: value 1 \(symbol\) cannot be sent to a worker: /,
    );
    // Value 0 went to the other worker: it is released, not left there.
    await eventually(
      () =>
        cluster.scheduler.state.tasks.size === 2 &&
        cluster.workers.reduce((n, w) => n + w.state.data.size, 0) === 2,
      5000,
      "value 0 released",
    );
  });
});

/** A worker as the scheduler lists it, holding and running nothing. */
function idleWorker(
  address: string,
  nthreads = 1,
  status: WorkerIdentity["status"] = "running",
): WorkerIdentity {
  return {
    address,
    name: null,
    nthreads,
    resources: {},
    status,
    processing: 0,
    keys: 0,
    nbytes: 0,
    spilled: null,
    memoryLimit: null,
    memory: null,
    nanny: false,
    actors: 0,
  };
}

/**
 * A scatterer on fake workers `w1…wn` (one thread each): `unreachable` ones
 * fail to connect, `breaking` ones store what they get but the connection
 * breaks before they answer, `refusing` ones cannot store any value; the
 * others store what they get. `calls` records each update_data: worker and
 * values; `dropped` the keys handed to dropStored, with their workers.
 */
function fakeScatterer(
  n: number,
  o: {
    unreachable?: string[];
    breaking?: string[];
    refusing?: string[];
    hanging?: string[];
    closing?: string[];
    /** Fail to connect with a broken connection, not a refused one: nothing was sent. */
    droppedOnConnect?: string[];
    /** Connected, but the call fails to connect (nothing was sent). */
    connectFailingCall?: string[];
    /** Threads of each worker, by position (default 1). */
    nthreads?: number[];
    /** Statuses of workers other than running. */
    statuses?: Record<string, WorkerIdentity["status"]>;
    /** List the workers to the scatterer in reverse address order. */
    reversed?: boolean;
    /** Called with the scatterer at each update_data and each ask for workers. */
    onCall?: (s: Scatterer) => void;
    onAsk?: (s: Scatterer) => void;
  } = {},
) {
  const calls: [string, unknown[]][] = [];
  const workers: WorkerIdentity[] = Array.from({ length: n }, (_, i) =>
    idleWorker(`tcp://10.0.0.${i + 1}:1`, o.nthreads?.[i] ?? 1, o.statuses?.[`w${i + 1}`]),
  );
  const name = (address: string) => `w${address.split(".")[3].split(":")[0]}`;
  /** The calls to hanging workers, failed when their connection is removed. */
  const hung = new Map<string, (err: Error) => void>();
  let asked = 0;
  const peers = {
    remove: (address: string, reason: string) => hung.get(address)?.(new CommClosedError(reason)),
    get: async (address: string) => {
      const w = name(address);
      if (o.unreachable?.includes(w)) throw new ConnectError(`cannot reach ${address}`, address);
      if (o.droppedOnConnect?.includes(w)) throw new CommClosedError("closed while connecting");
      return {
        call: async (_op: string, args: { data: Map<string, unknown> }) => {
          const keys = [...args.data.keys()];
          calls.push([w, [...args.data.values()]]);
          o.onCall?.(scatterer);
          if (o.connectFailingCall?.includes(w)) {
            throw new ConnectError(`cannot reach ${address}`, address);
          }
          if (o.breaking?.includes(w)) throw new CommClosedError("connection reset");
          if (o.closing?.includes(w)) {
            throw new RemoteError(
              `update_data refused: the worker ${address} is closing`,
              "WorkerClosingError",
              "",
            );
          }
          if (o.hanging?.includes(w)) {
            return new Promise((_, reject) => hung.set(address, reject));
          }
          const refuse = o.refusing?.includes(w) === true;
          return {
            status: "OK",
            stored: refuse
              ? {}
              : Object.fromEntries(keys.map((k) => [k, { nbytes: 8, typename: "number" }])),
            failed: refuse ? Object.fromEntries(keys.map((k) => [k, "MemoryError: full"])) : {},
          };
        },
      };
    },
  } as unknown as PeerPool;
  const dropped: [string, string[]][] = [];
  const scatterer = new Scatterer({
    id: "c",
    peers,
    // A hanging worker is frozen: the scheduler drops it after the first answer.
    workers: async () => {
      o.onAsk?.(scatterer);
      const listed =
        asked++ === 0 ? workers : workers.filter((w) => !o.hanging?.includes(name(w.address)));
      return o.reversed === true ? [...listed].reverse() : listed;
    },
    dropStored: (stored) => {
      for (const d of stored) dropped.push([d.key, d.workers.map(name)]);
    },
    inProcess: false,
    timeoutMs: 60,
  });
  return { scatterer, calls, name, dropped };
}

describe("Scatterer", () => {
  it("takes a timeoutMs up to the longest timer, and no longer", () => {
    expect(scatterOptionsProblem({ timeoutMs: MAX_TIMER_MS })).toBeNull();
    expect(scatterOptionsProblem({ timeoutMs: MAX_TIMER_MS + 1 })).toMatch(/^timeoutMs must be/);
  });

  it("deals the values to the workers in turn, across calls, each under a key of its own", async () => {
    const { scatterer, calls } = fakeScatterer(3);
    const first = await scatterer.place([1, 2], {});
    await scatterer.place([3, 4], {});
    expect(calls).toEqual([
      ["w1", [1]],
      ["w2", [2]],
      ["w3", [3]],
      ["w1", [4]],
    ]);
    expect(first.map((p) => p.key)).toEqual([
      expect.stringMatching(/^number-/),
      expect.stringMatching(/^number-/),
    ]);
    expect(first[0].key).not.toBe(first[1].key);
  });

  it("an unreachable worker's share goes to the others", async () => {
    const { scatterer, calls, name, dropped } = fakeScatterer(3, { unreachable: ["w2"] });
    const placed = await scatterer.place([1, 2, 3, 4], {});
    expect(placed.map((p) => p.workers.map(name))).toEqual([["w1"], ["w1"], ["w3"], ["w1"]]);
    // w2's share (value 2) went to the next in turn of the two left; w2 never had
    // it (it could not be reached), so its key stays.
    expect(calls).toEqual([
      ["w1", [1, 4]],
      ["w3", [3]],
      ["w1", [2]],
    ]);
    expect(dropped).toEqual([]);
  });

  it("a closing worker's share goes to the others, under the same keys (it stored nothing)", async () => {
    const { scatterer, calls, name, dropped } = fakeScatterer(2, { closing: ["w1"] });
    const placed = await scatterer.place([5, 6], {});
    expect(placed.map((p) => p.workers.map(name))).toEqual([["w2"], ["w2"]]);
    expect(calls).toEqual([
      ["w1", [5]],
      ["w2", [6]],
      ["w2", [5]],
    ]);
    expect(dropped).toEqual([]);
  });

  it("a worker whose connection broke may hold the value: it goes again under a new key, the old one is let go", async () => {
    const { scatterer, calls, dropped } = fakeScatterer(2, { breaking: ["w1"] });
    const placed = await scatterer.place([7], {});
    expect(calls).toEqual([
      ["w1", [7]],
      ["w2", [7]],
    ]);
    expect(dropped).toHaveLength(1);
    const [oldKey, where] = dropped[0];
    expect(where).toEqual(["w1"]);
    expect(placed[0].key).not.toBe(oldKey);
    expect(placed[0].key).toMatch(/^number-/);
  });

  it("a worker that leaves the cluster while taking values (frozen) is given up on: they go elsewhere", async () => {
    const { scatterer, calls, dropped, name } = fakeScatterer(2, { hanging: ["w1"] });
    const placed = await scatterer.place([3], {});
    expect(calls.map(([w]) => w)).toEqual(["w1", "w2"]);
    expect(placed[0].workers.map(name)).toEqual(["w2"]);
    expect(dropped.map(([, where]) => where)).toEqual([["w1"]]); // it may have stored it
  });

  it("broadcast goes to every reachable worker", async () => {
    const { scatterer, name } = fakeScatterer(3, { unreachable: ["w3"] });
    const placed = await scatterer.place([1], { broadcast: true });
    expect(placed[0].workers.map(name).sort()).toEqual(["w1", "w2"]);
    // A broken connection: every copy goes again under a new key, the old key is let go everywhere.
    const broken = fakeScatterer(3, { breaking: ["w2"] });
    const again = await broken.scatterer.place([1], { broadcast: true });
    expect(again[0].workers.map(broken.name).sort()).toEqual(["w1", "w3"]);
    expect(broken.dropped.map(([, where]) => where.sort())).toEqual([["w1", "w2", "w3"]]);
    expect(broken.dropped[0][0]).not.toBe(again[0].key);
  });

  it("a worker never connected to, or whose call failed to connect, stored nothing: its share goes elsewhere under the same keys", async () => {
    for (const o of [{ droppedOnConnect: ["w1"] }, { connectFailingCall: ["w1"] }]) {
      const { scatterer, name, dropped } = fakeScatterer(2, o);
      const placed = await scatterer.place([1], {});
      expect(placed[0].workers.map(name)).toEqual(["w2"]);
      expect(dropped).toEqual([]);
    }
  });

  it("deals in address order, however the scheduler lists the workers, to running ones only, a worker of no threads getting a turn", async () => {
    const { scatterer, calls } = fakeScatterer(3, { reversed: true });
    await scatterer.place([1, 2, 3], {});
    expect(calls.map(([w]) => w)).toEqual(["w1", "w2", "w3"]);

    const paused = fakeScatterer(3, { statuses: { w1: "paused", w3: "closing_gracefully" } });
    const placed = await paused.scatterer.place([1, 2], {});
    expect(placed.map((p) => p.workers.map(paused.name))).toEqual([["w2"], ["w2"]]);

    const threadless = fakeScatterer(2, { nthreads: [0, 0] });
    const spread = await threadless.scatterer.place([1, 2], {});
    expect(spread.map((p) => p.workers.map(threadless.name))).toEqual([["w1"], ["w2"]]);
  });

  it("an abort stops a scatter before it sends, or after, letting go of what was stored; the first abort's error stands", async () => {
    const first = new Error("first");
    const early = fakeScatterer(2, { onAsk: (s) => s.abort(first) });
    await expect(early.scatterer.place([1], {})).rejects.toBe(first);
    expect(early.calls).toEqual([]);

    const late = fakeScatterer(2, { onCall: (s) => s.abort(first) });
    await expect(late.scatterer.place([1, 2], {})).rejects.toBe(first);
    expect(late.dropped.map(([, where]) => where)).toEqual([["w1"], ["w2"]]);

    const twice = fakeScatterer(1).scatterer;
    twice.abort(first);
    twice.abort(new Error("second"));
    await expect(twice.place([1], {})).rejects.toBe(first);
  });

  it("gives up after timeoutMs when every worker fails, though new ones keep coming", async () => {
    // Found by chaos:tcp --scatter --freeze: each worker frozen as it came, the scatter
    // always had one more to try and never looked at its deadline (60 s and more).
    // Only the clock the deadline reads is faked, moved on 10 ms by each round trip to
    // the scheduler: in real time, a loaded host's first round trip alone took the
    // 60 ms, and only one worker came.
    vi.useFakeTimers({ toFake: ["Date"] });
    let next = 0;
    const scatterer = new Scatterer({
      id: "c",
      peers: {
        get: async (address: string) => {
          throw new ConnectError(`cannot reach ${address}`, address);
        },
      } as unknown as PeerPool,
      workers: async () => {
        await sleep(1); // a round trip to the scheduler
        vi.setSystemTime(Date.now() + 10);
        next++;
        return [idleWorker(`tcp://10.0.1.${next}:1`)];
      },
      dropStored: () => {},
      inProcess: false,
      timeoutMs: 60,
    });
    try {
      const outcome = await Promise.race([
        scatterer.place([1], {}).catch((e: unknown) => e),
        sleep(3_000).then(() => "still scattering after 3 s"),
      ]);
      expect(outcome).toBeInstanceOf(ScatterError);
      // Six came, one each 10 ms: the sixth failed as the 60 ms were over.
      const tried = [1, 2, 3, 4, 5, 6].map((i) => `tcp://10.0.1.${i}:1`);
      expect((outcome as Error).message).toBe(
        `scatter: no worker could take the values within 60 ms: ${tried.map((w) => `${w}: cannot reach ${w}`).join("; ")}`,
      );
    } finally {
      vi.useRealTimers();
      scatterer.abort(new Error("test over")); // stops the run the race left, if any
    }
  });

  it("fails when no worker can be reached, or one refuses a value, letting go of what was stored", async () => {
    const none = fakeScatterer(2, { unreachable: ["w1", "w2"] }).scatterer;
    await expect(none.place([1], {})).rejects.toThrow(
      "scatter: no worker could take the values within 60 ms: tcp://10.0.0.1:1: cannot reach tcp://10.0.0.1:1; tcp://10.0.0.2:1: cannot reach tcp://10.0.0.2:1",
    );
    const { scatterer, dropped } = fakeScatterer(2, { refusing: ["w2"] });
    const err = await scatterer.place([1, 2], {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScatterError);
    expect((err as Error).message).toBe(
      "scatter: tcp://10.0.0.2:1 could not store value 1: MemoryError: full",
    );
    expect(dropped.map(([, where]) => where)).toEqual([["w1"]]);
    // Values scattered again (a part of the caller's list) are named by their place in it.
    const again = fakeScatterer(2, { refusing: ["w2"] }).scatterer;
    await expect(again.place([1, 2], {}, [4, 9])).rejects.toThrow(
      "scatter: tcp://10.0.0.2:1 could not store value 9: MemoryError: full",
    );
  });
});
