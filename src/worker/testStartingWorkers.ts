/**
 * What the tests of a worker's start share: workers on an in-process scheduler,
 * with the stuck-start task functions loaded, closed (and the scheduler too)
 * after each test, and a scratch directory for the modules a test writes.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, afterEach } from "vitest";
import { Scheduler } from "../scheduler/scheduler.ts";
import { importModule } from "../util/importModule.ts";
import { TEST_TASKS } from "./testWorker.ts";
import { Worker } from "./worker.ts";
import type { WorkerOptions } from "./workerOptions.ts";

const STUCK_TASKS = new URL("./stuckStartTasks.ts", import.meta.url).href;

/** Call at a test file's top level: it registers the hooks that clean up after each test. */
export function startingWorkers(dirPrefix: string): {
  /** The scratch directory, removed after the file's tests. */
  readonly dir: string;
  /** A worker not started yet (silent, inline executor, one thread), closed after the test. */
  worker(scheduler: string, o?: Partial<WorkerOptions>): Worker;
  /** A started in-process scheduler, closed after the test. */
  scheduler(): Promise<Scheduler>;
  /** Run `fn` after the test, before what was made earlier is closed. */
  cleanup(fn: () => unknown): void;
  /**
   * Import the workers' task modules and `preloads` (URLs) as a start does, so
   * that a start's deadline is not spent on their first, cold import (80-250 ms,
   * far more on a loaded host) before the step a test bounds has begun.
   */
  warmImports(...preloads: string[]): Promise<void>;
} {
  const dir = mkdtempSync(join(tmpdir(), dirPrefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return {
    dir,
    worker(scheduler, o = {}) {
      const w = new Worker({
        scheduler,
        listen: "inproc://",
        nthreads: 1,
        executor: "inline",
        taskModules: [TEST_TASKS, STUCK_TASKS],
        connectTimeoutMs: 60_000,
        logger: pino({ level: "silent" }),
        ...o,
      });
      cleanups.push(() => w.close(0));
      return w;
    },
    async scheduler() {
      const s = await Scheduler.start({ logger: pino({ level: "silent" }), listen: "inproc://" });
      cleanups.push(() => s.close());
      return s;
    },
    cleanup(fn) {
      cleanups.push(fn);
    },
    async warmImports(...preloads) {
      for (const url of [TEST_TASKS, STUCK_TASKS, ...preloads]) await importModule(url);
    },
  };
}
