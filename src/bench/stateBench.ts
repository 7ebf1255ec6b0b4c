/**
 * The worker state machine alone: replays the recorded stimulus streams of
 * ../shared/bench/ with validation off, timing only handleStimulus, and measures heap
 * bytes per task for a state machine holding 1,000,000 tasks.
 *
 *   npm run bench:state [-- [--runs 5] [--warmup 1] [--streams tree,churn] [--tasks 1000000]]
 *   weft bench state [--runs 5] …
 *
 * Both run this with the V8 flags of `STATE_BENCH_NODE_FLAGS` and the options
 * checked by `stateBenchOptions` (stateBenchCommand.ts). Prints one JSON line per
 * stream and one for memory.
 *
 * Each stream is first replayed `--warmup` times untimed: V8 compiles the hot path
 * while it runs (the first replay takes up to twice as long as the later ones), and a
 * worker process runs for far longer than one replay.
 *
 * The state machine reads a real wall clock (`Date.now() / 1000`, as the reference
 * reads `time()` for its logs when its figures were measured), not the recordings'
 * zero clock.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { readMaybeGzip, workerStateFromConfig } from "../protocol/conformance.ts";
import { eventFromDict } from "../protocol/daskJson/events.ts";
import { UsageError } from "../util/usageError.ts";
import {
  ComputeTaskEvent,
  ExecuteSuccessEvent,
  type StateMachineEvent,
} from "../worker/state/events.ts";
import { WorkerState } from "../worker/state/workerState.ts";
import { freshPageMicros, minorFaults } from "./memoryCost.ts";
import { type BenchOutput, REFERENCE_SCRIPT, type StateBenchOptions } from "./stateBenchCommand.ts";
import { median } from "./stats.ts";
import { streamFiles } from "./streamDirectory.ts";
import { finalMismatch, type ParsedStream, readStream, wallClock } from "./streamFile.ts";

/** The reference's figures on this kind of machine (../shared/bench/README.md). */
const REFERENCE: Record<string, { eventsPerS: number; transitionsPerS: number }> = {
  independent: { eventsPerS: 20_869, transitionsPerS: 62_575 },
  "fan-in-remote": { eventsPerS: 8_832, transitionsPerS: 47_873 },
  tree: { eventsPerS: 17_056, transitionsPerS: 42_635 },
  churn: { eventsPerS: 20_515, transitionsPerS: 38_397 },
};
const REFERENCE_BYTES_PER_TASK = 2_400;

type Stream = ParsedStream<StateMachineEvent>;

function loadStream(path: string): Stream {
  return readStream(path, readMaybeGzip, eventFromDict);
}

/**
 * One replay's figures. Not its state machine: a caller holding that (even in a
 * variable of a loop body it has left) keeps it alive through the next replay's gc().
 */
interface Replay {
  seconds: number;
  /** What the final line checks: instructions, transitions and tasks held at the end. */
  got: { instructions: number; transition_counter: number; tasks: number };
  /** Minor page faults during the replay (fresh memory touched). */
  faults: number;
}

function replayOnce(stream: Stream): Replay {
  // The previous run's state machine is garbage now: collect it before timing, so its
  // cost is not charged to this run (the reference frees it by reference counting).
  gc();
  const ws = workerStateFromConfig(stream.config, stream.name, new Map(), wallClock);
  ws.validate = false;
  let instructions = 0;
  const events = stream.events;
  const f0 = minorFaults();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < events.length; i++) instructions += ws.handleStimulus(events[i]).length;
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const faults = minorFaults() - f0;
  const got = { instructions, transition_counter: ws.transitionCounter, tasks: ws.tasks.size };
  return { seconds, got, faults };
}

function benchStream(stream: Stream, runs: number, warmup: number): Record<string, unknown> {
  for (let w = 0; w < warmup; w++) replayOnce(stream);
  const times: number[] = [];
  const faults: number[] = [];
  let check = "";
  for (let r = 0; r < runs; r++) {
    const { seconds, got, faults: f } = replayOnce(stream);
    times.push(seconds);
    faults.push(f);
    const mismatch = finalMismatch(got, stream.final);
    if (mismatch !== null) check = `MISMATCH: ${mismatch}`;
  }
  const t = median(times);
  const ref = REFERENCE[stream.name];
  const eventsPerS = stream.events.length / t;
  const transitionsPerS = stream.final.transition_counter / t;
  return {
    bench: "state",
    stream: stream.name,
    events: stream.events.length,
    transitions: stream.final.transition_counter,
    runs,
    warmup_runs: warmup,
    median_s: Number(t.toFixed(4)),
    events_per_s: Math.round(eventsPerS),
    transitions_per_s: Math.round(transitionsPerS),
    ratio_vs_reference: ref ? Number((transitionsPerS / ref.transitionsPerS).toFixed(1)) : null,
    minor_faults_per_run: median(faults),
    final_check: check || "ok",
  };
}

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    g();
  }
}

/** Heap bytes per task for a state machine holding `n` finished tasks in memory. */
function benchMemory(n: number): Record<string, unknown> {
  gc();
  const before = process.memoryUsage().heapUsed;
  const ws = new WorkerState({ address: "127.0.0.1:1", nthreads: 1, validate: false });
  for (let i = 0; i < n; i++) {
    const key = `task-${i}`;
    ws.handleStimulus(
      ComputeTaskEvent.dummy(key, { stimulusId: `c${i}`, priority: [0, i] }),
      ExecuteSuccessEvent.dummy(key, { value: i, runId: 0, nbytes: 8, stimulusId: `e${i}` }),
    );
  }
  // The logs are bounded (100,000 and 10,000 records); measured apart, as the reference's figure excludes them.
  gc();
  const withLogs = process.memoryUsage().heapUsed;
  ws.log.clear();
  ws.stimulusLog.clear();
  gc();
  const after = process.memoryUsage().heapUsed;
  if (ws.tasks.size !== n) throw new Error(`expected ${n} tasks, got ${ws.tasks.size}`);
  const perTask = (after - before) / n;
  return {
    bench: "state-memory",
    tasks: n,
    heap_bytes_per_task: Math.round(perTask),
    heap_bytes_per_task_with_full_logs: Math.round((withLogs - before) / n),
    reference_bytes_per_task: REFERENCE_BYTES_PER_TASK,
    gc_exposed: typeof (globalThis as { gc?: unknown }).gc === "function",
  };
}

/** The reference's replay of a stream failed, or ended elsewhere than the stream says. */
export class ReferenceReplayError extends Error {
  override readonly name = "ReferenceReplayError";
}

/** The reference's own replay of `path` on this machine, now (tools/oracle/bench_reference.py). */
function referenceHere(path: string, python: string): { transitionsPerS: number } {
  const child = spawnSync(python, [REFERENCE_SCRIPT, "--runs", "3", path], { encoding: "utf8" });
  if (child.error)
    throw new UsageError(`--reference-here: cannot run ${python}: ${child.error.message}`);
  if (child.status !== 0) {
    throw new ReferenceReplayError(
      `--reference-here: the reference's replay of ${path} failed:\n${child.stdout}${child.stderr}`,
    );
  }
  const line = JSON.parse(child.stdout.trim().split("\n").pop() ?? "{}") as {
    transitions_per_s?: number;
    final_check?: string;
  };
  if (line.final_check !== "ok" || typeof line.transitions_per_s !== "number") {
    throw new ReferenceReplayError(
      `--reference-here: unexpected answer from the reference: ${child.stdout}`,
    );
  }
  return { transitionsPerS: line.transitions_per_s };
}

/**
 * Run the benchmark (`name` starts its messages) and return the exit code: 0,
 * 1 for a replay that ended elsewhere than its stream says, 2 for a directory
 * without streams. Throws for a stream it cannot read or name.
 */
export function runStateBench(o: StateBenchOptions, out: BenchOutput, name: string): number {
  const line = (record: Record<string, unknown>): void => {
    out.stdout.write(`${JSON.stringify(record)}\n`);
  };
  const found = streamFiles(o.dir);
  if ("problem" in found) {
    out.stderr.write(`${name}: ${found.problem}\n`);
    return 2;
  }
  const { files } = found;
  const names = files.map((f) => f.replace(/\.jsonl\.gz$/, ""));
  for (const w of o.streams ?? []) {
    if (!names.includes(w)) {
      throw new UsageError(
        `no stream ${JSON.stringify(w)} in ${o.dir} (there: ${names.join(", ")})`,
      );
    }
  }
  let failed = false;
  line({ bench: "machine", fresh_page_us: freshPageMicros() });
  for (const stream of names) {
    if (o.streams !== undefined && !o.streams.includes(stream)) continue;
    const path = join(o.dir, `${stream}.jsonl.gz`);
    out.stderr.write(`decoding ${stream}…\n`);
    const parsed = loadStream(path);
    out.stderr.write(`replaying ${stream}: ${o.warmup} warm-up and ${o.runs} timed runs…\n`);
    const result = benchStream(parsed, o.runs, o.warmup);
    if (result.final_check !== "ok") failed = true;
    if (o.referenceWith !== undefined) {
      out.stderr.write(`timing the reference on ${stream}…\n`);
      const ref = referenceHere(path, o.referenceWith);
      result.reference_here_transitions_per_s = ref.transitionsPerS;
      result.ratio_vs_reference_here = Number(
        ((result.transitions_per_s as number) / ref.transitionsPerS).toFixed(1),
      );
    }
    line(result);
  }
  if (o.tasks > 0) {
    out.stderr.write(`holding ${o.tasks} tasks for the memory measurement…\n`);
    line(benchMemory(o.tasks));
  }
  return failed ? 1 : 0;
}
