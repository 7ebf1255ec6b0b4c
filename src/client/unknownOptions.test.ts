import { afterEach, describe, expect, it } from "vitest";
import { wait } from "./completion.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { inc, slowInc } from "./testTasks.ts";

afterEach(closeTestClusters);

describe("options no method has are refused, rather than dropped", () => {
  it("refuses Dask's timeout for timeoutMs in the waits of coordination, which waited forever", async () => {
    const { cluster, client } = await testCluster();
    const other = await cluster.client();
    await other.lock("L").acquire();
    const timeout = { timeout: 100 } as never;
    const refused = (what: string) =>
      new TypeError(`${what}: unknown option "timeout" (did you mean timeoutMs?)`);
    await expect(client.lock("L").acquire(timeout)).rejects.toThrow(refused("Lock.acquire"));
    await expect(client.multiLock(["L"]).acquire(timeout)).rejects.toThrow(
      refused("MultiLock.acquire"),
    );
    await expect(client.semaphore("S").acquire(timeout)).rejects.toThrow(
      refused("Semaphore.acquire"),
    );
    await expect(client.event("E").wait(timeout)).rejects.toThrow(refused("Event.wait"));
    await expect(client.variable("V").get(timeout)).rejects.toThrow(refused("Variable.get"));
    await expect(client.queue("Q").get(timeout)).rejects.toThrow(refused("Queue.get"));
    await expect(client.queue("Q").put(1, timeout)).rejects.toThrow(refused("Queue.put"));
    const sub = await client.sub("P");
    await expect(sub.get(timeout)).rejects.toThrow(refused("Sub.get"));
    sub.close();
    // The options they have are taken.
    expect(await client.lock("L").acquire({ timeoutMs: 10, blocking: true })).toBe(false);
    const both = client.multiLock(["L", "M"]); // apart from Lock's names: free
    expect(await both.acquire({ timeoutMs: 10, numLocks: 1 })).toBe(true);
    await both.release();
  });

  it("refuses blocking: false beside a timeoutMs, one of which was dropped, as Dask's Lock does", async () => {
    const { cluster, client } = await testCluster();
    const other = await cluster.client();
    await other.lock("L").acquire();
    await expect(client.lock("L").acquire({ blocking: false, timeoutMs: 100 })).rejects.toThrow(
      "Lock.acquire: blocking: false does not wait, so timeoutMs (100) cannot be given with it",
    );
    await expect(
      client.multiLock(["M"]).acquire({ blocking: false, timeoutMs: 100 }),
    ).rejects.toThrow(
      "MultiLock.acquire: blocking: false does not wait, so timeoutMs (100) cannot be given with it",
    );
    expect(await client.lock("L").acquire({ blocking: false, timeoutMs: 0 })).toBe(false);
    expect(await client.lock("L").acquire({ blocking: false })).toBe(false);
  });

  it("refuses a misspelt option of wait and waitForWorkers, which waited forever", async () => {
    const { client } = await testCluster();
    const slow = client.submit(slowInc, 1, 60_000);
    await expect(wait(slow, { timout: 100 } as never)).rejects.toThrow(
      'wait: unknown option "timout" (did you mean timeout?)',
    );
    await expect(wait(slow, { timeoutMs: 100 } as never)).rejects.toThrow(
      'wait: unknown option "timeoutMs" (did you mean timeout?)',
    );
    await expect(client.waitForWorkers(5, { timeout: 100 } as never)).rejects.toThrow(
      'waitForWorkers: unknown option "timeout" (did you mean timeoutMs?)',
    );
  });

  it("refuses a misspelt option of the other client calls, rather than run with the default", async () => {
    const { client } = await testCluster();
    const f = client.submit(inc, 1);
    await f;
    await expect(client.scatter([1], { broadcst: true } as never)).rejects.toThrow(
      'scatter: unknown option "broadcst" (did you mean broadcast?)',
    );
    await expect(client.replicate(f, { N: 1 } as never)).rejects.toThrow(
      'replicate: unknown option "N" (did you mean n?)',
    );
    await expect(client.rebalance([f], { wrkers: ["x"] } as never)).rejects.toThrow(
      'rebalance: unknown option "wrkers" (did you mean workers?)',
    );
    await expect(client.retireWorkers({ workers: ["0"] } as never)).rejects.toThrow(
      'retireWorkers: unknown option "workers" (the options are n)',
    );
    await expect(client.restart({ timeout: 100 } as never)).rejects.toThrow(
      'restart: unknown option "timeout" (did you mean timeoutMs?)',
    );
    await expect(client.getDataset("none", { dflt: 1 } as never)).rejects.toThrow(
      'getDataset: unknown option "dflt" (the options are default)',
    );
    await expect(client.getMetadata("none", { defualt: 1 } as never)).rejects.toThrow(
      'getMetadata: unknown option "defualt" (did you mean default?)',
    );
    await expect(client.publishDataset("d", [f], { overide: true } as never)).rejects.toThrow(
      'publishDataset: unknown option "overide" (did you mean override?)',
    );
    await expect(client.cancel(f, { forse: true } as never)).rejects.toThrow(
      'cancel: unknown option "forse" (did you mean force?)',
    );
    await expect(client.runWith({ wrkers: ["0"] } as never, inc, 1)).rejects.toThrow(
      'runWith: unknown option "wrkers" (did you mean workers?)',
    );
    await expect(client.registerWorkerPlugin(inc, { nme: "p" } as never)).rejects.toThrow(
      'registerWorkerPlugin: unknown option "nme" (did you mean name?)',
    );
    await expect(client.getWorkerLogs({ N: 1 } as never)).rejects.toThrow(
      'getWorkerLogs: unknown option "N" (did you mean n?)',
    );
    await expect(client.getTaskStream({ cnt: 1 } as never)).rejects.toThrow(
      'getTaskStream: unknown option "cnt" (the options are since, count)',
    );
    await expect(client.nbytes(undefined, { summry: true } as never)).rejects.toThrow(
      'nbytes: unknown option "summry" (did you mean summary?)',
    );
    await expect(client.profile(() => 1, { intervalus: 100 } as never)).rejects.toThrow(
      'profile: unknown option "intervalus" (did you mean intervalUs?)',
    );
    await expect(client.dumpClusterState("d", { frmat: "yaml" } as never)).rejects.toThrow(
      'dumpClusterState: unknown option "frmat" (did you mean format?)',
    );
    expect(() => client.semaphore("S", { max_leases: 2 } as never)).toThrow(
      'semaphore: unknown option "max_leases" (did you mean maxLeases?)',
    );
    expect(() => client.queue("Q", { maxSize: 2 } as never)).toThrow(
      'queue: unknown option "maxSize" (did you mean maxsize?)',
    );
    await expect(client.sub("P", { maxbuffered: 2 } as never)).rejects.toThrow(
      'sub: unknown option "maxbuffered" (did you mean maxBuffered?)',
    );
    // Nothing was done meanwhile: the future is still the client's, and still held.
    expect(await f).toBe(2);
  });

  it("refuses a misspelt option of adapt, which scaled with the default instead", async () => {
    const { cluster } = await testCluster({ workers: 1 });
    expect(() => cluster.adapt({ minimun: 1 } as never)).toThrow(
      'adapt: unknown option "minimun" (did you mean minimum?)',
    );
  });
});
