import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { PeerPool } from "../worker/peerPool.ts";
import { LocalCluster } from "./localCluster.ts";
import { logsOfWorkers } from "./logs.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";

afterEach(closeTestClusters);

/** An info-level logger writing nowhere: the cluster keeps its records all the same. */
const quietInfo = () => pino({ level: "info" }, { write: () => {} });

describe("getWorkerLogs and getSchedulerLogs", () => {
  it("read the last records each process logged", async () => {
    const { cluster, client } = await testCluster({ logger: quietInfo() });
    const logs = await client.getWorkerLogs();
    const addresses = cluster.workers.map((w) => w.address).sort();
    expect(Object.keys(logs)).toEqual(addresses);
    for (const address of addresses) {
      const started = logs[address].find((r) => r.msg === "worker started");
      expect(started).toMatchObject({ level: "info" });
      expect(Math.abs((started?.time ?? 0) - Date.now())).toBeLessThan(60_000);
    }
    // One worker, by address; the last record only.
    const one = await client.getWorkerLogs({ workers: addresses[0], n: 1 });
    expect(Object.keys(one)).toEqual([addresses[0]]);
    expect(one[addresses[0]]).toHaveLength(1);

    const scheduler = await client.getSchedulerLogs();
    expect(scheduler.length).toBeGreaterThan(0);
    expect(scheduler.some((r) => r.level === "info")).toBe(true);
    expect(await client.getSchedulerLogs({ n: 0 })).toEqual([]);
  });

  it("keep nothing below the logger's level, and refuse a bad count", async () => {
    const { client } = await testCluster();
    const logs = await client.getWorkerLogs();
    expect(Object.values(logs).every((records) => records.length === 0)).toBe(true);
    await expect(client.getWorkerLogs({ n: -1 })).rejects.toThrow(
      "getWorkerLogs: n must be an integer ≥ 0, got -1",
    );
    await expect(client.getSchedulerLogs({ n: 1.5 })).rejects.toThrow(
      "getSchedulerLogs: n must be an integer ≥ 0, got 1.5",
    );
  });
});

describe("getWorkerLogs of workers named", () => {
  it("rejects for an entry no connected worker matches, rather than answer as for a worker that logged nothing", async () => {
    const { client } = await testCluster();
    expect(Object.keys(await client.getWorkerLogs({ workers: ["0"] }))).toHaveLength(1);
    await expect(client.getWorkerLogs({ workers: ["0", "nosuch"] })).rejects.toThrow(
      "getWorkerLogs: cannot read the logs of nosuch: no connected worker matches it",
    );
  });
});

describe("a LocalCluster's logs", () => {
  it("keep warnings and worse by default ($WEFT_LOG_LEVEL unset), as Dask's silence_logs", async () => {
    const level = process.env.WEFT_LOG_LEVEL;
    delete process.env.WEFT_LOG_LEVEL;
    let cluster: LocalCluster | null = null;
    try {
      cluster = await LocalCluster.start({ workers: 1 });
      const client = await cluster.client({ logger: pino({ level: "silent" }) });
      const [records] = Object.values(await client.getWorkerLogs());
      // A worker logs "worker started" at info as it starts: not kept.
      expect(records?.some((r) => r.msg === "worker started")).toBe(false);
      const levels = [...(records ?? []), ...(await client.getSchedulerLogs())].map((r) => r.level);
      expect(levels.filter((l) => l === "info" || l === "debug")).toEqual([]);
    } finally {
      if (level !== undefined) process.env.WEFT_LOG_LEVEL = level;
      await cluster?.close();
    }
  });
});

describe("logsOfWorkers", () => {
  /** A worker that answers `get_logs` with `answer`. */
  const answering = (answer: unknown) =>
    ({
      get: async () => ({ comm: {}, call: async () => answer }),
    }) as unknown as PeerPool;
  const record = { time: 1, level: "info", msg: "worker started" };

  it("takes an answer of log records, and refuses one with a record lacking its time, level or message", async () => {
    expect(await logsOfWorkers(answering([record]), ["tcp://a:1"], 1, "client-1")).toEqual({
      "tcp://a:1": [record],
    });
    const bad = [
      { level: "info", msg: "m" },
      { time: 1, msg: "m" },
      { time: 1, level: "info" },
      null,
    ];
    for (const r of bad) {
      await expect(
        logsOfWorkers(answering([record, r]), ["tcp://a:1"], 1, "client-1"),
      ).rejects.toThrow("getWorkerLogs: tcp://a:1 answered get_logs with no log records");
    }
  });
});
