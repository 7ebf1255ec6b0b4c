/**
 * `--nthreads` (and `weft run`'s `--workers` times it) bounded by the pool threads one
 * process can start: each is a V8 isolate, all started at once. LocalCluster and Worker
 * are stood in for, so that a bound missing starts no thread here: it says so instead.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it, vi } from "vitest";
import { TEST_WORKER_ARGS, testContext } from "../testContext.ts";
import { runGraph } from "./runAction.ts";
import { runWorker } from "./workerAction.ts";

vi.mock("../../client/localCluster.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../client/localCluster.ts")>();
  const StandIn = {
    start: (): Promise<never> => Promise.reject(new Error("a cluster would start")),
  };
  return { ...real, LocalCluster: StandIn };
});

vi.mock("../../worker/worker.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../worker/worker.ts")>();
  class StandIn {
    constructor() {
      throw new Error("a worker would start");
    }
  }
  return { ...real, Worker: StandIn };
});

const dir = mkdtempSync(join(tmpdir(), "weft-pool-threads-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const graph = join(dir, "g.json");
writeFileSync(graph, JSON.stringify({ graph: { a: 1 } }));

/** What `weft run` says given `more`, its graph never computed. */
async function runSays(more: Partial<Parameters<typeof runGraph>[1]>): Promise<string> {
  const ctx = testContext();
  await runGraph(
    graph,
    { tasks: [], upload: [], key: [], progress: false, logLevel: "silent", ...more },
    ctx,
  );
  expect(ctx.exitCode).toBe(2);
  return ctx.stderr.text;
}

it("weft run refuses more than 1024 pool threads in all (one process), not with --executor inline", async () => {
  // --nthreads 100000 grew the process by some 300 MB a second until the machine ran out.
  expect(await runSays({ nthreads: "100000" })).toBe(
    "weft run: --workers × --nthreads must be at most 1024 (one process: each thread is a V8 isolate, all started at once; --executor inline starts none), got 2 × 100000\n",
  );
  expect(await runSays({ workers: "3", nthreads: "342" })).toMatch(/got 3 × 342\n$/);
  expect(await runSays({ workers: "4", nthreads: "256" })).toBe(
    "weft run: a cluster would start\n",
  );
  expect(await runSays({ nthreads: "100000", executor: "inline" })).toBe(
    "weft run: a cluster would start\n",
  );
});

it("weft worker refuses more than 1024 pool threads, not with --executor inline", async () => {
  const says = async (more: Partial<Parameters<typeof runWorker>[1]>): Promise<string> => {
    const ctx = testContext();
    await runWorker("tcp://127.0.0.1:1", { ...TEST_WORKER_ARGS, ...more }, ctx, () =>
      Promise.resolve(),
    );
    expect(ctx.exitCode).toBe(2);
    return ctx.stderr.text;
  };
  expect(await says({ nthreads: "1025", executor: "threads" })).toBe(
    "weft worker: cannot start: --nthreads must be at most 1024 (each thread is a V8 isolate, all started at once; --executor inline starts none), got 1025\n",
  );
  expect(await says({ nthreads: "1024", executor: "threads" })).toBe(
    "weft worker: cannot start: a worker would start\n",
  );
  expect(await says({ nthreads: "100000", executor: "inline" })).toBe(
    "weft worker: cannot start: a worker would start\n",
  );
});
