import { afterEach, describe, expect, it, vi } from "vitest";
import type { WorkerIdentity } from "../protocol/messagesSession.ts";
import { type AdminHost, ClusterAdmin } from "./clusterAdmin.ts";
import { RestartTimeoutError, WorkersTimeoutError } from "./errors.ts";
import type { Future } from "./future.ts";

/** A worker of `address` whose status at the scheduler is `status`. */
function worker(address: string, status = "running"): WorkerIdentity {
  return { address, name: null, status } as WorkerIdentity;
}

/**
 * A host whose scheduler answers each request with `answer(msg)` and lists
 * `workers()`; what it was asked is in `asked`, the keys it holds in `held`.
 */
function standIn(
  answer: (msg: Record<string, unknown>) => unknown,
  workers: () => WorkerIdentity[],
): { host: AdminHost; asked: Record<string, unknown>[]; held: string[] } {
  const asked: Record<string, unknown>[] = [];
  const held: string[] = [];
  const host = {
    id: "client-1",
    requests: {
      ask: async (msg: Record<string, unknown>) => {
        asked.push(msg);
        return answer(msg);
      },
      stimulusId: (op: string) => `${op}-1`,
    },
    results: {
      hold: (futures: readonly Future[]) => held.push(...futures.map((f) => f.key)),
      unhold: (futures: readonly Future[]) => {
        for (const f of futures) held.splice(held.indexOf(f.key), 1);
      },
      untilFinished: async () => {},
    },
    workers: async () => workers(),
    checkOpen: () => {},
    ownFutures: (_op: string, futures: Future | readonly Future[]) =>
      Array.isArray(futures) ? futures : [futures],
  } as unknown as AdminHost;
  return { host, asked, held };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("ClusterAdmin", () => {
  it("replicate of no futures asks the scheduler nothing", async () => {
    const { host, asked } = standIn(
      () => ({ failed: [] }),
      () => [],
    );
    await new ClusterAdmin(host).replicate([]);
    expect(asked).toEqual([]);
  });

  it("replicate and rebalance hold the futures until answered, refused or not", async () => {
    const futures = [{ key: "x" }, { key: "y" }] as Future[];
    const ok = standIn(
      () => ({ failed: [], moved: 0 }),
      () => [],
    );
    await new ClusterAdmin(ok.host).replicate(futures);
    await new ClusterAdmin(ok.host).rebalance(futures);
    expect(ok.asked.map((m) => m.op)).toEqual(["replicate", "rebalance"]);
    expect(ok.held).toEqual([]);
    const refused = standIn(
      () => ({ failed: ["x"], moved: 0 }),
      () => [],
    );
    await expect(new ClusterAdmin(refused.host).replicate(futures)).rejects.toThrow();
    await expect(new ClusterAdmin(refused.host).rebalance(futures)).rejects.toThrow();
    expect(refused.held).toEqual([]);
  });

  it("replicate and rebalance ask nothing of a client closed while they waited for the futures", async () => {
    const { host, asked } = standIn(
      () => ({ failed: [], moved: 0 }),
      () => [],
    );
    const closed = {
      ...host,
      checkOpen: () => {
        throw new Error("the client is closed");
      },
    } as AdminHost;
    const futures = [{ key: "x" }] as Future[];
    await expect(new ClusterAdmin(closed).replicate(futures)).rejects.toThrow("closed");
    await expect(new ClusterAdmin(closed).rebalance(futures)).rejects.toThrow("closed");
    await expect(new ClusterAdmin(closed).rebalance()).rejects.toThrow("closed");
    expect(asked).toEqual([]);
  });

  it("waitForWorkers sleeps no longer than its timeout between looks", async () => {
    const { host } = standIn(
      () => null,
      () => [],
    );
    // A poll of ten minutes: the wait would outlast the test's own timeout.
    const err = await new ClusterAdmin(host)
      .waitForWorkers(1, { timeoutMs: 20, pollMs: 600_000 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkersTimeoutError);
  });

  it("waitForWorkers counts the running workers only", async () => {
    const { host } = standIn(
      () => null,
      () => [worker("tcp://a:1"), worker("tcp://b:2", "paused"), worker("tcp://c:3", "closed")],
    );
    const admin = new ClusterAdmin(host);
    expect(await admin.waitForWorkers(1, { timeoutMs: 0 })).toHaveLength(3);
    const err = await admin.waitForWorkers(2, { timeoutMs: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkersTimeoutError);
    expect(err).toMatchObject({ wanted: 2, running: 1 });
  });

  it("restart's timeout counts from the request: the wait for the workers has only what is left", async () => {
    // The clock moves only when the stand-in scheduler is asked: 900 ms for the
    // restart, 50 ms for each look at the workers, none of which came back.
    vi.useFakeTimers({ toFake: ["Date"] });
    let looks = 0;
    const { host } = standIn(
      () => {
        vi.setSystemTime(Date.now() + 900);
        return { workers: ["tcp://a:1"], nannies: ["tcp://a:1"] };
      },
      () => {
        looks++;
        vi.setSystemTime(Date.now() + 50);
        return [];
      },
    );
    const err = await new ClusterAdmin(host).restart({ timeoutMs: 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RestartTimeoutError);
    expect(err).toMatchObject({ wanted: 1, running: 0, timeoutMs: 1000 });
    expect(looks).toBe(2);
  });
});
