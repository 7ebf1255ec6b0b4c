/**
 * Test helpers for a worker in a process of its own, joining a test cluster,
 * which a test can freeze (SIGSTOP: its connections stay open, nothing
 * answers, as in a paused VM) and thaw.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Client } from "./client.ts";
import type { LocalCluster } from "./localCluster.ts";
import { CLIENT_TEST_TASKS } from "./testCluster.ts";

const WEFT_BIN = fileURLToPath(new URL("../../bin/weft.js", import.meta.url));

/**
 * A scheduler's `workerTtlMs` for a test that freezes a worker: short, so that the
 * scheduler removes it soon, but three of its heartbeats (one a second). A TTL of one
 * heartbeat removed a worker whose heartbeat came a little late on a loaded host
 * (8 busy loops on 2 cores) before the test froze it.
 */
export const FROZEN_WORKER_TTL_MS = 3_000;
const children: ChildProcess[] = [];

/**
 * Start `weft worker` (one thread, inline by default, the client test tasks) for
 * `cluster`, whose only worker is in this process, and wait until it has joined:
 * its process and its address.
 */
export async function workerProcessJoining(
  cluster: LocalCluster,
  client: Client,
  executor: "inline" | "threads" = "inline",
): Promise<{ child: ChildProcess; address: string }> {
  const local = cluster.workers[0].address;
  const child = spawn(
    process.execPath,
    [WEFT_BIN, "worker", cluster.address, "--tasks", fileURLToPath(CLIENT_TEST_TASKS)].concat([
      "--nthreads",
      "1",
      "--executor",
      executor,
      "--listen",
      "tcp://127.0.0.1:0",
    ]),
    { stdio: "ignore" },
  );
  children.push(child);
  await client.waitForWorkers(2, { timeoutMs: 60_000 });
  const address = (await client.workers()).map((w) => w.address).find((a) => a !== local);
  return { child, address: address as string };
}

/** For `afterEach`: kill the worker processes started (a frozen one too). */
export function killWorkerProcesses(): void {
  for (const c of children.splice(0)) c.kill("SIGKILL");
}

/** Settles with `{ resolved: value }`, the error `p` rejects with, or "still waiting" after `ms`. */
export function within(p: PromiseLike<unknown>, ms: number): Promise<unknown> {
  return Promise.race([
    Promise.resolve(p).then(
      (v) => ({ resolved: v }),
      (e: unknown) => e,
    ),
    new Promise((r) => setTimeout(() => r("still waiting"), ms)),
  ]);
}
