/** Test helpers: local clusters with validation on, silent logs, closed and checked after each test. */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { afterEach, beforeEach } from "vitest";
import { Worker } from "../worker/worker.ts";
import type { WorkerOptions } from "../worker/workerOptions.ts";
import type { Client } from "./client.ts";
import { LocalCluster, type LocalClusterOptions } from "./localCluster.ts";

/** The task module of the client tests. */
export const CLIENT_TEST_TASKS = new URL("./testTasks.ts", import.meta.url).href;

const started: LocalCluster[] = [];

/**
 * A LocalCluster of 2 single-threaded inline workers running the client test
 * tasks, validation on, and a client connected to it.
 */
export async function testCluster(
  o: LocalClusterOptions = {},
): Promise<{ cluster: LocalCluster; client: Client }> {
  const cluster = await LocalCluster.start({
    workers: 2,
    threadsPerWorker: 1,
    executor: "inline",
    taskModules: [CLIENT_TEST_TASKS],
    validate: true,
    logger: pino({ level: "silent" }),
    ...o,
    worker: { heartbeatIntervalMs: 100, findMissingIntervalMs: 50, ...o.worker },
  });
  started.push(cluster);
  return { cluster, client: await cluster.client() };
}

/** A worker joining `cluster` later, as the test cluster's run (the caller closes it). */
export function extraWorker(
  cluster: LocalCluster,
  o: Partial<WorkerOptions> = {},
): Promise<Worker> {
  return Worker.create({
    scheduler: cluster.address,
    listen: "inproc://worker",
    executor: "inline",
    taskModules: [CLIENT_TEST_TASKS],
    validate: true,
    logger: pino({ level: "silent" }),
    ...o,
  });
}

/**
 * Run `before` once, as `client` next makes the request `op` of the scheduler
 * (for a worker to join as the scheduler is asked to record what the workers
 * there were given), then make it.
 */
export function beforeRequest(client: Client, op: string, before: () => Promise<void>): void {
  type Request = (op: string, fields?: Record<string, unknown>) => Promise<unknown>;
  const conn = (client as unknown as { conn: { request: Request } }).conn;
  const request = conn.request.bind(conn);
  let done = false;
  conn.request = async (asked, fields) => {
    if (asked === op && !done) {
      done = true;
      await before();
    }
    return request(asked, fields);
  };
}

/** For `afterEach`: check every state machine of the clusters started, then close them. */
export async function closeTestClusters(): Promise<void> {
  const clusters = started.splice(0);
  try {
    for (const c of clusters) c.validateState();
  } finally {
    for (const c of clusters) await c.close();
  }
}

/** Wait until `cond()` holds (polling), or fail after `ms`. */
export async function eventually(
  cond: () => boolean,
  ms = 10_000,
  what = "condition",
): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`${what} not met within ${ms} ms`);
    await sleep(5);
  }
}

/** Keys any state machine of the cluster still knows. */
export function knownKeys(cluster: LocalCluster): { scheduler: string[]; workers: string[][] } {
  return {
    scheduler: [...cluster.scheduler.state.tasks.keys()],
    workers: cluster.workers.map((w) => [...w.state.tasks.keys()]),
  };
}

/**
 * For a test file whose tests make files and extra workers: before each test
 * a fresh directory under the system's temporary one (`scratch.dir`); after
 * it, the workers pushed on `scratch.workers` closed, the test clusters
 * checked and closed, and the directory removed.
 */
export function clusterScratch(prefix: string): {
  readonly dir: string;
  readonly workers: Worker[];
} {
  let dir = "";
  const workers: Worker[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), `weft-${prefix}-`));
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.close();
    await closeTestClusters();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    workers,
  };
}
