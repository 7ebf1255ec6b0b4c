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
 * `workers()`; what it was asked is in `asked`.
 */
function standIn(
  answer: (msg: Record<string, unknown>) => unknown,
  workers: () => WorkerIdentity[],
): { host: AdminHost; asked: Record<string, unknown>[] } {
  const asked: Record<string, unknown>[] = [];
  const host = {
    id: "client-1",
    requests: {
      ask: async (msg: Record<string, unknown>) => {
        asked.push(msg);
        return answer(msg);
      },
      stimulusId: (op: string) => `${op}-1`,
    },
    results: { hold: () => {}, unhold: () => {}, untilFinished: async () => {} },
    workers: async () => workers(),
    checkOpen: () => {},
    ownFutures: (_op: string, futures: Future | readonly Future[]) =>
      Array.isArray(futures) ? futures : [futures],
  } as unknown as AdminHost;
  return { host, asked };
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
