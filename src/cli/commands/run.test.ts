/** `weft run`'s embedded cluster's log (the rest of weft run: compute.test.ts). */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { Sink, testContext } from "../testContext.ts";
import { runGraph } from "./runAction.ts";

const BENCH_TASKS = fileURLToPath(new URL("../../bench/clusterTasks.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "weft-run-log-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const graph = join(dir, "g.json");
writeFileSync(graph, JSON.stringify({ graph: { a: 1 } }));
/** A task module that does not load: one per test, as a module's failed import is kept. */
function broken(name: string): string {
  const file = join(dir, `${name}.ts`);
  writeFileSync(file, "syntax error here (\n");
  return file;
}

/** `weft run FILE` with `more` options, its log written to a sink: the context and the log. */
async function run(
  file: string,
  more: Partial<Parameters<typeof runGraph>[1]> = {},
): Promise<{ ctx: ReturnType<typeof testContext>; log: Sink }> {
  const ctx = testContext();
  const log = new Sink();
  await runGraph(
    file,
    { tasks: [], upload: [], key: [], progress: false, logLevel: "error", ...more },
    ctx,
    log,
  );
  return { ctx, log };
}

it("a --tasks module that does not load is one line, without the workers' error records", async () => {
  const { ctx, log } = await run(graph, { tasks: [broken("quiet")] });
  expect(ctx.exitCode).toBe(2);
  expect(ctx.stderr.text).toMatch(
    /^weft run: LocalCluster: a worker failed to start: .*Unexpected identifier 'error'\n$/,
  );
  // The pool threads report their failure after the start gave up: give them the time.
  await sleep(1_000);
  expect(log.text).toBe("");
});

it("once the cluster has started, its records are written: held while it started, then as they come", async () => {
  const failing = join(dir, "fails.json");
  writeFileSync(
    failing,
    JSON.stringify({ graph: { x: ["split", null, 2, 0] }, tasks: [BENCH_TASKS] }),
  );
  const { ctx, log } = await run(failing, { executor: "inline", logLevel: "info" });
  expect(ctx.exitCode).toBe(1);
  const messages = log.text
    .trimEnd()
    .split("\n")
    .map((l) => (JSON.parse(l) as { msg: string }).msg);
  expect(messages[0]).toBe("scheduler listening");
  expect(messages).toContain("worker started");
  expect(messages.at(-1)).toBe("scheduler closed");
});

it("a --tasks module that is not there is said in the option's words, before any cluster starts", async () => {
  const missing = await run(graph, { tasks: ["./no-such-tasks.ts"] });
  expect(missing.ctx.exitCode).toBe(2);
  expect(missing.ctx.stderr.text).toBe(
    `weft run: --tasks ./no-such-tasks.ts: no such file: ${resolve("no-such-tasks.ts")}\n`,
  );
  expect(missing.log.text).toBe("");
  const url = await run(graph, { tasks: ["https://example.com/tasks.ts"] });
  expect(url.ctx.stderr.text).toBe(
    "weft run: --tasks https://example.com/tasks.ts: only file URLs and paths are supported, got https://example.com/tasks.ts\n",
  );
  // A graph file's own "tasks", resolved against its directory.
  const withTasks = join(dir, "with-tasks.json");
  writeFileSync(withTasks, JSON.stringify({ graph: { a: 1 }, tasks: ["./absent.ts"] }));
  const inGraph = await run(withTasks);
  expect(inGraph.ctx.exitCode).toBe(2);
  expect(inGraph.ctx.stderr.text).toBe(
    `weft run: ${withTasks}: tasks: no such file: ${join(dir, "absent.ts")}\n`,
  );
});

it("an --http-address the embedded cluster cannot serve at is said in the flag's words", async () => {
  // They were "Scheduler option httpAddress: …" and "cannot serve HTTP at …: ENOTFOUND".
  const bad = await run(graph, { httpAddress: ":99999" });
  expect(bad.ctx.exitCode).toBe(2);
  expect(bad.ctx.stderr.text).toMatch(
    /^weft run: --http-address: HTTP address must be \[host\]:port/,
  );
  const unresolved = await run(graph, { httpAddress: "no-such-host.invalid:0" });
  expect(unresolved.ctx.exitCode).toBe(2);
  expect(unresolved.ctx.stderr.text).toMatch(
    /^weft run: --http-address no-such-host\.invalid:0: cannot resolve the host "no-such-host\.invalid" \((ENOTFOUND|EAI_AGAIN)\)\n$/,
  );
});

it("a key the graph does not have, or a cycle, is said before any cluster starts or any scheduler is reached", async () => {
  // It was said once an embedded cluster had started (its records logged), seconds later.
  const tuples = join(dir, "tuples.json");
  writeFileSync(tuples, JSON.stringify({ graph: { "('x', 0)": 1, y: 2 } }));
  const cut = await run(tuples, { keys: "('x', 0)", logLevel: "info" });
  expect(cut.ctx.exitCode).toBe(2);
  expect(cut.ctx.stderr.text).toBe(
    `weft run: ${tuples}: compute: the graph has no key "('x'" (--keys splits its list at commas, cutting the graph's key "('x', 0)": name it with --key "('x', 0)")\n`,
  );
  expect(cut.log.text).toBe("");
  const cycle = join(dir, "cycle.json");
  writeFileSync(cycle, JSON.stringify({ a: ["inc", "a"] }));
  const looped = await run(cycle, { logLevel: "info" });
  expect(looped.ctx.stderr.text).toBe(
    `weft run: ${cycle}: compute: the graph has a cycle: a → a\n`,
  );
  expect(looped.log.text).toBe("");
  // Nothing listens there: the key is said, not the scheduler that cannot be reached.
  const remote = await run(tuples, { keys: "z", scheduler: "tcp://127.0.0.1:1" });
  expect(remote.ctx.exitCode).toBe(2);
  expect(remote.ctx.stderr.text).toBe(`weft run: ${tuples}: compute: the graph has no key "z"\n`);
});

it("refuses every embedded-cluster option given with --scheduler, naming them all, before connecting", async () => {
  const embedded = {
    workers: "3",
    nthreads: "2",
    executor: "inline",
    memoryLimit: "1GB",
    httpAddress: ":0",
    validate: true,
  } as const;
  const flags = {
    workers: "--workers",
    nthreads: "--nthreads",
    executor: "--executor",
    memoryLimit: "--memory-limit",
    httpAddress: "--http-address",
    validate: "--validate",
  } as const;
  const scheduler = "tcp://127.0.0.1:1";
  for (const option of Object.keys(embedded) as (keyof typeof embedded)[]) {
    const { ctx } = await run(graph, { scheduler, [option]: embedded[option] });
    expect(ctx.exitCode, option).toBe(2);
    expect(ctx.stderr.text, option).toMatch(
      new RegExp(
        `^weft run: ${flags[option]} applies to the embedded cluster only, not with --scheduler `,
      ),
    );
  }
  const { ctx } = await run(graph, { scheduler, ...embedded });
  expect(ctx.stderr.text).toMatch(
    /^weft run: --workers, --nthreads, --executor, --memory-limit, --http-address, --validate apply to the embedded cluster only/,
  );
});

it("refuses the TCP size options without --scheduler: the embedded cluster's messages go over no TCP", async () => {
  // They were ignored: --max-message-bytes 1MiB guarded nothing.
  const said = "with --scheduler only (the embedded cluster's messages do not go over TCP)";
  for (const [more, flags] of [
    [{ maxFrameBytes: "1KiB" }, "--max-frame-bytes applies"],
    [{ maxMessageBytes: "1MiB" }, "--max-message-bytes applies"],
    [
      { maxFrameBytes: "1MiB", maxMessageBytes: "1GiB" },
      "--max-frame-bytes and --max-message-bytes apply",
    ],
  ] as const) {
    const { ctx } = await run(graph, more);
    expect(ctx.exitCode, flags).toBe(2);
    expect(ctx.stderr.text).toBe(`weft run: ${flags} ${said}\n`);
  }
});

it("refuses counts and timeouts that are no positive integers, and more workers than one process takes", async () => {
  for (const [more, said] of [
    [{ workers: "0" }, "--workers must be a positive integer, got 0"],
    [{ nthreads: "1.5" }, "--nthreads must be a positive integer, got 1.5"],
    [{ workers: "257" }, "--workers must be at most 256 (one process), got 257"],
    [
      { scheduler: "tcp://127.0.0.1:1", connectTimeout: "0" },
      "--connect-timeout must be a positive whole number of milliseconds, or a duration such as 60s, 5m or 1.5h, got 0",
    ],
  ] as const) {
    const { ctx } = await run(graph, more);
    expect(ctx.exitCode, said).toBe(2);
    expect(ctx.stderr.text).toBe(`weft run: ${said}\n`);
  }
});

it("a failed task whose remote traceback is empty is one line, without a blank one after it", async () => {
  const tasks = join(dir, "stackless.ts");
  const weftIndex = new URL("../../client/index.ts", import.meta.url).href;
  writeFileSync(
    tasks,
    `import { defineTask } from ${JSON.stringify(weftIndex)};\n` +
      // A stack of its first line alone: the worker reports no frame.
      `defineTask("stackless", () => { const e = new Error("boom"); e.stack = "Error: boom"; throw e; });\n`,
  );
  const file = join(dir, "stackless.json");
  writeFileSync(file, JSON.stringify({ graph: { x: ["stackless"] }, tasks: [tasks] }));
  const { ctx } = await run(file, { executor: "inline" });
  expect(ctx.exitCode).toBe(1);
  expect(ctx.stderr.text).toBe("weft run: task x failed: Error: boom\n");
});

it("a --memory-limit up to 1 is Dask's share of the machine's memory, 0 none: not a 1-byte budget", async () => {
  // Read as bytes, Dask's --memory-limit 1 (all the memory) was a 1-byte budget that
  // failed every task with a MemoryError; then it was refused.
  const zeros = join(dir, "zeros.json");
  writeFileSync(zeros, JSON.stringify({ graph: { z: ["zeros", 1000] }, tasks: [BENCH_TASKS] }));
  for (const memoryLimit of ["1", "0.5", "0"]) {
    const { ctx } = await run(zeros, { memoryLimit, executor: "inline" });
    expect({ memoryLimit, code: ctx.exitCode, err: ctx.stderr.text }).toEqual({
      memoryLimit,
      code: 0,
      err: "",
    });
    expect(JSON.parse(ctx.stdout.text).z).toHaveLength(1000);
  }
});
