import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ExecuteSuccessEvent } from "../worker/state/events.ts";
import type { Worker } from "../worker/worker.ts";
import { LocalCluster } from "./localCluster.ts";
import { closeTestClusters, eventually, testCluster } from "./testCluster.ts";
import { inc } from "./testTasks.ts";

afterEach(closeTestClusters);

/** A stimulus the worker state machine rejects (a result for a task it never had): a bug's stand-in. */
const breakWorker = (w: Worker) =>
  w.handleStimulus(ExecuteSuccessEvent.dummy("never-given", { stimulusId: "test-fault" }));

/** Log records of a pino logger at `info`, kept in memory. */
function recordingLogger(): { logger: pino.Logger; records: { level: number; msg: string }[] } {
  const records: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: "info" },
    { write: (line: string) => void records.push(JSON.parse(line)) },
  );
  return { logger, records };
}

/** The packages of `names` loaded into this process so far (prom-client and yaml: CommonJS). */
function loadedPackages(names: readonly string[]): string[] {
  const files = Object.keys(createRequire(import.meta.url).cache);
  return names.filter((n) => files.some((f) => f.includes(`/node_modules/${n}/`)));
}

// First in the file, before any test serves HTTP. Every `weft` process pays for what it
// loads at start (`weft run`, each worker a nanny starts): prom-client and yaml were some
// 0.1 s of CPU there, for HTTP endpoints off by default and a YAML dump seldom written.
describe("what a cluster loads", () => {
  it("neither prom-client nor yaml, until it serves /metrics or writes a YAML dump", async () => {
    const lazy = ["prom-client", "yaml"];
    const cluster = await LocalCluster.start({
      workers: 1,
      executor: "inline",
      logger: pino({ level: "silent" }),
    });
    try {
      const client = await cluster.client();
      expect(await client.submit(inc, 1).result()).toBe(2);
      await client.close();
    } finally {
      await cluster.close();
    }
    expect(loadedPackages(lazy)).toEqual([]);
    // What the check relies on: once loaded, they show.
    await import("../util/promRegistry.ts");
    await import("../protocol/clusterDump/pyyamlWrite.ts");
    expect(loadedPackages(lazy)).toEqual(lazy);
  });
});

describe("LocalCluster's defaults", () => {
  it("two workers of one thread each, on thread pools, in process, not validating", async () => {
    const cluster = await LocalCluster.start({ logger: pino({ level: "silent" }) });
    try {
      expect(cluster.address).toMatch(/^inproc:\/\//);
      expect(cluster.workers.map((w) => w.address).every((a) => a.startsWith("inproc://"))).toBe(
        true,
      );
      expect(
        cluster.workers.map((w) => ({
          nthreads: w.options.nthreads,
          executor: w.executorKind,
          validate: w.options.validate,
          name: w.options.name,
        })),
      ).toEqual([
        { nthreads: 1, executor: "piscina", validate: false, name: "0" },
        { nthreads: 1, executor: "piscina", validate: false, name: "1" },
      ]);
    } finally {
      await cluster.close();
    }
  });
});

describe("LocalCluster's replacement of a worker that stopped on a fault", () => {
  it("a replacement that cannot even be made (its task module gone) uses up the restarts, then is given up, without an unhandled rejection", async () => {
    const dir = mkdtempSync(join(tmpdir(), "weft-lc-"));
    try {
      const extra = join(dir, "extra.mjs");
      writeFileSync(extra, "export {};\n");
      const { logger, records } = recordingLogger();
      const { cluster, client } = await testCluster({
        workers: 2,
        maxWorkerRestarts: 2,
        taskModules: [new URL("./testTasks.ts", import.meta.url).href, pathToFileURL(extra).href],
        logger,
      });
      rmSync(extra);
      const victim = cluster.workers[0];
      breakWorker(victim);
      await eventually(
        () => records.some((r) => /is not replaced again/.test(r.msg)),
        10_000,
        "given up",
      );
      const failedStarts = records.filter((r) => /could not start a worker in place/.test(r.msg));
      expect(failedStarts).toHaveLength(2);
      expect(cluster.workers[0]).toBe(victim);
      // The other worker runs on: the cluster stays open and computes.
      expect(await client.submit(inc, 1)).toBe(2);
      expect(cluster.workerCount).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("LocalCluster whose scheduler closes under it", () => {
  it("closes itself after client.shutdown(), so that client() and scale fail at once rather than wait for a scheduler that is gone", async () => {
    const { cluster, client } = await testCluster();
    await client.shutdown();
    const started = Date.now();
    await expect(cluster.client()).rejects.toThrow("the LocalCluster is closed");
    await expect(cluster.scale(3)).rejects.toThrow("the LocalCluster is closed");
    expect(Date.now() - started).toBeLessThan(5_000);
    await cluster.close(); // still fine: idempotent
  });
});

describe("LocalCluster's size", () => {
  it("is refused past what one process runs, before anything starts; scale too", async () => {
    await expect(LocalCluster.start({ workers: 1025 })).rejects.toThrow(
      new RangeError(
        'LocalCluster option workers × threadsPerWorker must be at most 1024 with the threads executor (one process: each thread is a V8 isolate, all started at once; executor "inline" starts none), got 1025 × 1',
      ),
    );
    await expect(LocalCluster.start({ workers: 300, threadsPerWorker: 4 })).rejects.toThrow(
      /got 300 × 4$/,
    );
    await expect(LocalCluster.start({ workers: 1e9, executor: "inline" })).rejects.toThrow(
      new RangeError(
        "LocalCluster option workers must be at most 10000 (one process), got 1000000000",
      ),
    );
    const cluster = await LocalCluster.start({ workers: 0, threadsPerWorker: 512 });
    try {
      await expect(cluster.scale(3)).rejects.toThrow(
        /^scale: n × threadsPerWorker must be at most 1024 .*got 3 × 512$/,
      );
      expect(cluster.workers).toHaveLength(0);
    } finally {
      await cluster.close();
    }
  });
});

describe("LocalCluster's worker options", () => {
  it("are checked before anything starts, even with no worker to make yet (workers: 0, for scale or adapt)", async () => {
    await expect(
      LocalCluster.start({ workers: 0, worker: { heartbeatIntervalMS: 100 } as never }),
    ).rejects.toThrow(
      'Worker options: unknown option "heartbeatIntervalMS" (did you mean heartbeatIntervalMs?)',
    );
    await expect(
      LocalCluster.start({ workers: 0, worker: { memoryLimit: "lots" } }),
    ).rejects.toThrow(/memoryLimit/);
  });
});
