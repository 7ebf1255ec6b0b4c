import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Scheduler } from "../../scheduler/scheduler.ts";
import { Worker } from "../../worker/worker.ts";
import { testContext } from "../testContext.ts";
import { runGraph } from "./runAction.ts";

const BENCH_TASKS = fileURLToPath(new URL("../../bench/clusterTasks.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "weft-run-graph-tasks-"));
const silent = pino({ level: "silent" });
let scheduler: Scheduler;
let worker: Worker;
beforeAll(async () => {
  scheduler = await Scheduler.start({ listen: "tcp://127.0.0.1:0", logger: silent });
  // A worker started without the graph's task module, as one given no --tasks.
  worker = new Worker({
    scheduler: scheduler.address,
    listen: "tcp://127.0.0.1:0",
    nthreads: 1,
    executor: "inline",
    logger: silent,
  });
  await worker.start();
});
afterAll(async () => {
  await worker.close();
  await scheduler.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What `weft run FILE --scheduler` said on stderr, and its exit code. */
async function runRemote(graph: object): Promise<{ code: number | undefined; err: string }> {
  const file = join(dir, "g.json");
  writeFileSync(file, JSON.stringify(graph));
  const ctx = testContext();
  await runGraph(
    file,
    {
      tasks: [],
      upload: [],
      key: [],
      progress: false,
      logLevel: "silent",
      scheduler: scheduler.address,
    },
    ctx,
  );
  return { code: ctx.exitCode, err: ctx.stderr.text };
}

it("a task the workers cannot run says that the graph file's task modules were not sent", async () => {
  // It said only 'UnknownTaskFunctionError: unknown task function "inc"', the file
  // naming the module that defines it.
  const r = await runRemote({ graph: { x: ["inc", 1] }, tasks: [BENCH_TASKS] });
  expect(r.code).toBe(1);
  expect(r.err).toContain('UnknownTaskFunctionError: unknown task function "inc"');
  expect(r.err).toMatch(
    new RegExp(
      `\\nweft run: .*g\\.json names task modules \\("tasks": ${BENCH_TASKS.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\), which weft run loads into an embedded cluster only: with --scheduler, start the workers with --tasks naming them \\(or modules defining the same tasks\\), or give them to weft run with --tasks\\n$`,
    ),
  );
});

it("says nothing of task modules when the graph file names none", async () => {
  const r = await runRemote({ graph: { x: ["inc", 1] } });
  expect(r.code).toBe(1);
  expect(r.err).toContain('unknown task function "inc"');
  expect(r.err).not.toContain("names task modules");
});
