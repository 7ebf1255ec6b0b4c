/**
 * How much of a replay of the `independent` stream is the port's generality: a lean
 * replay written for that stream alone, alternated in one process with the port.
 *
 *   node --expose-gc --max-semi-space-size=64 --import tsx bench/leanIndependent.ts \
 *     [--stream ../shared/bench/independent.jsonl.gz] [--pairs 12] [--wall-clock]
 *
 * The lean replay handles only what `independent` sends (compute-task without inputs,
 * execute-success, free-keys) and makes the same six transitions a task, the same
 * instructions and the same bookkeeping as the seed (a 100,000-record transition log, a
 * 10,000-event stimulus log of copies, a per-prefix task counter), but with states as
 * small integers, one `switch` for the transitions, a work list instead of `Recs`
 * objects, and a log of four slots and a packed state word. It is a measurement of what
 * a different implementation could gain, not a state machine: it checks nothing and
 * would be wrong on any other stream. Both replays must end with the stream's final
 * line. Prints one JSON line: the median times and the median of the paired ratios.
 */

import { Command } from "commander";
import { positiveInteger } from "../src/bench/benchOptions.ts";
import { median } from "../src/bench/stats.ts";
import { finalMismatch, type ParsedStream, readStream } from "../src/bench/streamFile.ts";
import { readMaybeGzip, workerStateFromConfig } from "../src/protocol/conformance.ts";
import { eventFromDict } from "../src/protocol/daskJson/events.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { keySplit } from "../src/util/keySplit.ts";
import type { StateMachineEvent } from "../src/worker/state/events.ts";
import { runScript } from "./benchCli.ts";

type Stream = ParsedStream<StateMachineEvent>;

const RELEASED = 0;
const WAITING = 1;
const READY = 2;
const EXECUTING = 3;
const MEMORY = 4;
const FORGOTTEN = 5;
/** A log record's "no recommendation" state. */
const NONE = 15;

/** A task, with about as many fields as the port's, so that it costs as much to make. */
class LeanTask {
  state = RELEASED;
  priority: readonly number[] = [];
  runId = -1;
  duration = 0;
  annotations: unknown = null;
  runSpec: unknown = null;
  nbytes: number | null = null;
  type: string | null = null;
  value: unknown = undefined;
  startstops: { action: string; start: number; stop: number }[] | null = null;
  counterRow: Float64Array | null = null;
  inc = 0;
  dependencies = null;
  dependents = null;
  waitingForData = null;
  waiters = null;
  whoHas = null;
  extras = null;
  constructor(readonly key: string) {}
}

class LeanInstruction {
  constructor(
    readonly op: "execute" | "task-finished" | "release-worker-data",
    readonly key: string,
    readonly stimulusId: string,
    readonly runId = -1,
  ) {}
}

/** What a replay ends with, as the stream's final line says it. */
export interface ReplayEnd {
  readonly seconds: number;
  readonly instructions: number;
  readonly transition_counter: number;
  readonly tasks: number;
}

const LOG_RECORDS = 100_000;
const STIMULUS_LOG = 10_000;

/** Replay `stream` the lean way; throws for an event `independent` does not send. */
export function leanReplay(stream: Stream, clock: () => number): ReplayEnd {
  const nthreads = stream.config.nthreads as number;
  const tasks = new Map<string, LeanTask>();
  const data = new Map<string, unknown>();
  const executing = new Set<LeanTask>();
  let generation = 0;
  let transitionCounter = 0;
  let inc = 0;

  const ready: LeanTask[] = [];
  const less = (a: LeanTask, b: LeanTask): boolean => {
    const pa = a.priority;
    const pb = b.priority;
    for (let i = 0; i < pa.length && i < pb.length; i++) if (pa[i] !== pb[i]) return pa[i] < pb[i];
    return pa.length !== pb.length ? pa.length < pb.length : a.inc < b.inc;
  };
  const swap = (i: number, j: number): void => {
    const t = ready[i];
    ready[i] = ready[j];
    ready[j] = t;
  };
  const push = (t: LeanTask): void => {
    t.inc = inc++;
    ready.push(t);
    for (let i = ready.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!less(ready[i], ready[p])) break;
      swap(i, p);
      i = p;
    }
  };
  const pop = (): LeanTask => {
    const top = ready[0];
    const last = ready.pop() as LeanTask;
    if (ready.length > 0) {
      ready[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        if (l >= ready.length) break;
        const m = l + 1 < ready.length && less(ready[l + 1], ready[l]) ? l + 1 : l;
        if (!less(ready[m], ready[i])) break;
        swap(i, m);
        i = m;
      }
    }
    return top;
  };

  const slots: unknown[] = new Array(LOG_RECORDS * 4).fill(undefined);
  const packed = new Uint32Array(LOG_RECORDS);
  const times = new Float64Array(LOG_RECORDS);
  let head = 0;
  const log = (key: string, states: number, rec: unknown, sid: string, time: number): void => {
    const s = head * 4;
    slots[s] = key;
    slots[s + 1] = rec;
    slots[s + 2] = sid;
    packed[head] = states;
    times[head] = time;
    head = head + 1 === LOG_RECORDS ? 0 : head + 1;
  };
  const stimulusLog: unknown[] = new Array(STIMULUS_LOG);
  let stimulusHead = 0;
  const logStimulus = (copy: unknown): void => {
    stimulusLog[stimulusHead] = copy;
    stimulusHead = stimulusHead + 1 === STIMULUS_LOG ? 0 : stimulusHead + 1;
  };

  const rows = new Map<string, Float64Array>();
  const count = (t: LeanTask, from: number, to: number, now: number): void => {
    let row = t.counterRow;
    if (row === null) {
      const prefix = keySplit(t.key);
      row = rows.get(prefix) ?? new Float64Array(13);
      if (!rows.has(prefix)) {
        row[12] = now;
        rows.set(prefix, row);
      }
      t.counterRow = row;
    }
    if (from >= 0) row[from]--;
    if (to !== FORGOTTEN) row[to]++;
  };

  const workTasks: LeanTask[] = [];
  const workStates: number[] = [];
  let work = 0;
  const recommend = (t: LeanTask, state: number): void => {
    workTasks[work] = t;
    workStates[work] = state;
    work++;
  };
  let out: LeanInstruction[] = [];
  const ensureComputing = (): void => {
    while (executing.size < nthreads && ready.length > 0) recommend(pop(), EXECUTING);
  };
  const transition = (t: LeanTask, to: number, sid: string, now: number): void => {
    const from = t.state;
    if (from === to) return;
    transitionCounter++;
    const before = work;
    switch (from * 8 + to) {
      case RELEASED * 8 + WAITING:
        t.state = WAITING;
        recommend(t, READY);
        break;
      case WAITING * 8 + READY:
        t.state = READY;
        push(t);
        ensureComputing();
        break;
      case READY * 8 + EXECUTING:
        t.state = EXECUTING;
        executing.add(t);
        out.push(new LeanInstruction("execute", t.key, sid));
        break;
      case EXECUTING * 8 + MEMORY:
        t.state = MEMORY;
        executing.delete(t);
        data.set(t.key, t.value);
        t.value = undefined;
        out.push(new LeanInstruction("task-finished", t.key, sid, t.runId));
        break;
      case MEMORY * 8 + RELEASED:
        t.state = RELEASED;
        data.delete(t.key);
        out.push(new LeanInstruction("release-worker-data", t.key, sid));
        recommend(t, FORGOTTEN);
        break;
      case RELEASED * 8 + FORGOTTEN:
        t.state = FORGOTTEN;
        tasks.delete(t.key);
        break;
      default:
        throw new Error(`the lean replay has no transition ${from} -> ${to}`);
    }
    const made = work > before;
    const recState = made ? workStates[work - 1] : NONE;
    const recKey = made ? workTasks[work - 1].key : null;
    log(t.key, from | (to << 4) | (t.state << 8) | (recState << 12), recKey, sid, now);
    count(t, from, t.state, now);
  };
  const drain = (sid: string, now: number): void => {
    while (work > 0) {
      work--;
      const t = workTasks[work];
      workTasks[work] = undefined as unknown as LeanTask;
      transition(t, workStates[work], sid, now);
    }
  };

  let instructions = 0;
  const t0 = performance.now();
  for (const ev of stream.events) {
    out = [];
    const now = clock();
    const sid = ev.stimulusId;
    switch (ev.cls) {
      case "ComputeTaskEvent": {
        logStimulus({ ...ev, runSpec: null, handled: now });
        let t = tasks.get(ev.key);
        if (t === undefined) {
          t = new LeanTask(ev.key);
          tasks.set(ev.key, t);
          count(t, -1, RELEASED, now);
        }
        log(t.key, 0xffff, "compute-task", sid, now);
        t.runId = ev.runId;
        t.runSpec = ev.runSpec;
        t.priority = [...ev.priority, generation--];
        t.duration = ev.duration;
        t.annotations = ev.annotations;
        recommend(t, WAITING);
        drain(sid, now);
        break;
      }
      case "ExecuteSuccessEvent": {
        logStimulus({ ...ev, value: null, handled: now });
        const t = tasks.get(ev.key) as LeanTask;
        t.nbytes = ev.nbytes;
        t.type = ev.type;
        t.value = ev.value;
        (t.startstops ??= []).push({ action: "compute", start: ev.start, stop: ev.stop });
        ensureComputing();
        recommend(t, MEMORY);
        drain(sid, now);
        break;
      }
      case "FreeKeysEvent": {
        logStimulus(ev);
        log("free-keys", 0xfffe, ev.keys, sid, now);
        for (const k of ev.keys) {
          const t = tasks.get(k);
          if (t !== undefined) recommend(t, RELEASED);
        }
        drain(sid, now);
        break;
      }
      default:
        throw new Error(`the lean replay handles only what independent sends, not ${ev.cls}`);
    }
    instructions += out.length;
  }
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, instructions, transition_counter: transitionCounter, tasks: tasks.size };
}

/** Replay `stream` with the port, timing only handleStimulus. */
export function portReplay(stream: Stream, clock: () => number): ReplayEnd {
  const ws = workerStateFromConfig(stream.config, stream.name, new Map(), clock);
  ws.validate = false;
  let instructions = 0;
  const t0 = performance.now();
  for (const ev of stream.events) instructions += ws.handleStimulus(ev).length;
  const seconds = (performance.now() - t0) / 1000;
  return { seconds, instructions, transition_counter: ws.transitionCounter, tasks: ws.tasks.size };
}

function checked(end: ReplayEnd, stream: Stream, who: string): number {
  const mismatch = finalMismatch(end, stream.final);
  if (mismatch !== null) throw new Error(`${who} replay of ${stream.name}: ${mismatch}`);
  return end.seconds;
}

export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("bench:lean")
    .description("Alternate a lean replay of the independent stream with the port's")
    .option("--stream <path>", "the stream", "../shared/bench/independent.jsonl.gz")
    .option("--pairs <n>", "timed pairs", "12")
    .option("--wall-clock", "give both replays Date.now() / 1000 (default: the zero clock)")
    .exitOverride();
  program.parse(argv, { from: "user" });
  const opts = program.opts<{ stream: string; pairs: string; wallClock?: boolean }>();
  const pairs = positiveInteger(opts.pairs, "--pairs");
  const clock = opts.wallClock ? () => Date.now() / 1000 : () => 0;
  const stream = readStream(opts.stream, readMaybeGzip, eventFromDict);
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  // Warm both up, so that each is compiled before it is timed.
  checked(portReplay(stream, clock), stream, "port");
  checked(leanReplay(stream, clock), stream, "lean");
  const port: number[] = [];
  const lean: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < pairs; i++) {
    gc();
    const p = checked(portReplay(stream, clock), stream, "port");
    gc();
    const l = checked(leanReplay(stream, clock), stream, "lean");
    port.push(p);
    lean.push(l);
    ratios.push(p / l);
  }
  const result = {
    bench: "lean-independent",
    stream: stream.name,
    pairs,
    clock: opts.wallClock ? "wall" : "zero",
    portSeconds: Number(median(port).toFixed(4)),
    leanSeconds: Number(median(lean).toFixed(4)),
    portOverLean: Number(median(ratios).toFixed(3)),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  process.exitCode = await runScript("bench:lean", main);
}
