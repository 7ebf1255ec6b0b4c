/** A `weft` command's context for tests: string buffers for its streams, and the program run in-process. */

import { writeFileSync } from "node:fs";
import { Writable } from "node:stream";
import type { Scheduler } from "../scheduler/scheduler.ts";
import type { Worker } from "../worker/worker.ts";
import { freePort } from "./commands/contactAddress.ts";
import type { CliContext } from "./commands/context.ts";
import { runScheduler } from "./commands/schedulerAction.ts";
import { runWorker } from "./commands/workerAction.ts";
import { main } from "./weft.ts";

/** A stream that keeps what is written to it; `isTTY` as a terminal's. */
export class Sink extends Writable {
  text = "";
  constructor(readonly isTTY = false) {
    super();
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

/** A context whose stdout and stderr are {@link Sink}s (stderr a terminal if `tty`). */
export function testContext(tty = false): CliContext & { stdout: Sink; stderr: Sink } {
  return { stdout: new Sink(), stderr: new Sink(tty), exitCode: 0 };
}

/** Runs `weft ...args` in this process: its exit code and what it wrote. */
export async function runWeft(
  args: readonly string[],
  tty = false,
): Promise<{ code: number; out: string; err: string }> {
  const ctx = testContext(tty);
  const code = await main(["node", "weft", ...args], ctx);
  return { code, out: ctx.stdout.text, err: ctx.stderr.text };
}

/** The options of a `weft worker` in a test: one inline thread, silent, on 127.0.0.1. */
export const TEST_WORKER_ARGS = {
  nthreads: "1",
  tasks: [],
  listen: "tcp://127.0.0.1:0",
  executor: "inline",
  logLevel: "silent",
  connectTimeout: "5000",
} satisfies Parameters<typeof runWorker>[1];

/**
 * `weft worker SCHEDULER` run in this process (one inline thread, silent,
 * listening on 127.0.0.1) until its worker closes: the worker once started,
 * and the end of the run, after which `ctx` holds its exit code and output.
 */
export async function cliWorker(
  scheduler: string,
  ctx: CliContext,
  more: Partial<Parameters<typeof runWorker>[1]> = {},
): Promise<{ worker: Worker; done: Promise<void> }> {
  let started: Worker | null = null;
  const done = runWorker(scheduler, { ...TEST_WORKER_ARGS, ...more }, ctx, (w) => {
    started = w;
    return w.closed;
  });
  while (started === null) await new Promise((r) => setTimeout(r, 5));
  return { worker: started, done };
}

/**
 * `weft scheduler` run in this process with `opts` until `stop()`: the
 * scheduler once started, and the end of the run, after which `ctx` holds
 * its exit code and output.
 */
export async function cliScheduler(
  opts: Parameters<typeof runScheduler>[0],
  ctx: CliContext,
): Promise<{ scheduler: Scheduler; stop: () => void; done: Promise<void> }> {
  let started: Scheduler | null = null;
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const done = runScheduler(opts, ctx, (s) => {
    started = s;
    return stopped;
  });
  while (started === null) await new Promise((r) => setTimeout(r, 5));
  return { scheduler: started, stop, done };
}

/** A tcp:// address nothing listens at (a port just let go of): connections are refused. */
export async function refusingAddress(): Promise<string> {
  return `tcp://127.0.0.1:${await freePort("127.0.0.1")}`;
}

/**
 * Write at `path` a preload module whose `weftSetup` appends "up" to the file
 * `marks` and never resolves, and whose `weftTeardown` appends "down": a start
 * that never ends, and a sign of whether its teardown ran.
 */
export function writeStuckSetupPreload(path: string, marks: string): void {
  writeFileSync(
    path,
    `import { appendFileSync } from "node:fs";
export function weftSetup() { appendFileSync(${JSON.stringify(marks)}, "up\\n"); return new Promise(() => {}); }
export function weftTeardown() { appendFileSync(${JSON.stringify(marks)}, "down\\n"); }
`,
  );
}
