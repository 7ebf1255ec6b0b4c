/** Test helpers: workers wired to a {@link FakeScheduler}, with validation on and logs captured. */

import { type Logger, pino } from "pino";
import { Worker } from "./worker.ts";
import type { WorkerOptions } from "./workerOptions.ts";

/** The task module of the tests. */
export const TEST_TASKS = new URL("./testTasks.ts", import.meta.url).href;

/** A pino logger that keeps its records in memory. */
export function memoryLogger(): { logger: Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "debug" },
    {
      write(line: string) {
        records.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  return { logger, records };
}

/** Start a worker for tests: validate on, quick timers, silent unless a logger is given. */
export function testWorker(scheduler: string, o: Partial<WorkerOptions> = {}): Promise<Worker> {
  return Worker.create({
    scheduler,
    listen: "inproc://",
    nthreads: 1,
    executor: "inline",
    taskModules: [TEST_TASKS],
    validate: true,
    retryBusyWorkerDelayMs: 20,
    findMissingIntervalMs: 50,
    heartbeatIntervalMs: 100,
    connectTimeoutMs: 5_000,
    logger: pino({ level: "silent" }),
    ...o,
  });
}
