/**
 * Random valid stimulus streams from the port's fuzz driver, written as traces for
 * record.py, which replays them through the reference and records vectors.
 *
 *   npx tsx tools/oracle/traces.ts --out DIR --from 1 --count 100 [--steps 200]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { runScript } from "../../bench/benchCli.ts";
import { nonNegativeInteger, positiveInteger } from "../../src/bench/benchOptions.ts";
import { eventToDict } from "../../src/protocol/daskJson/events.ts";
import type { StateMachineEvent } from "../../src/worker/state/events.ts";
import { FuzzDriver, type FuzzOptions } from "../../src/worker/state/fuzz/index.ts";
import { Rng } from "../../src/worker/state/fuzz/rng.ts";
import { type ActionKind, DEFAULT_WEIGHTS } from "../../src/worker/state/fuzz/stimulusGenerator.ts";
import type { WorkerState } from "../../src/worker/state/workerState.ts";
import type { StoreError } from "./traceFormat.ts";

function finiteOrNull(n: number): number | null {
  return Number.isFinite(n) ? n : null;
}

/** One fuzz run as a trace: config and events in the vectors' forms. */
export function traceOf(
  seed: number,
  steps: number,
  maxKeys?: number,
  mixed = false,
): Record<string, unknown> {
  const d = new FuzzDriver({
    seed,
    steps,
    maxKeys,
    validateEvery: 0,
    checkLiveness: true,
    ...(mixed ? mixedOptions(seed) : {}),
  });
  const ws = d.ws as WorkerState & { handleStimulus: WorkerState["handleStimulus"] };
  const events: Record<string, unknown>[] = [];
  const storeErrors: Record<string, StoreError[]> = {};
  const handle = ws.handleStimulus.bind(ws);
  ws.handleStimulus = (...stims: StateMachineEvent[]) => {
    for (const ev of stims) events.push(eventToDict(ev));
    return handle(...stims);
  };
  const store = ws.data as { set(key: string, value: unknown): unknown };
  const set = store.set.bind(store);
  store.set = (key: string, value: unknown) => {
    try {
      return set(key, value);
    } catch (err) {
      const e = err as { exceptionText?: string; tracebackText?: string };
      const at = String(events.length - 1);
      (storeErrors[at] ??= []).push({
        key,
        exception_text: e.exceptionText ?? String(err),
        traceback_text: e.tracebackText ?? "",
      });
      throw err;
    }
  };
  let error: string | null = null;
  try {
    for (let i = 0; i < steps; i++) d.step();
    d.drain();
  } catch (err) {
    error = String(err).split("\n")[0];
  }
  const c = d.config;
  return {
    name: `oracle-fuzz-seed-${seed}`,
    port_error: error,
    config: {
      nthreads: c.nthreads,
      address: ws.address,
      resources: c.resources,
      transfer_incoming_count_limit: c.transferIncomingCountLimit,
      transfer_incoming_bytes_limit: finiteOrNull(c.transferIncomingBytesLimit),
      transfer_message_bytes_limit: finiteOrNull(c.transferMessageBytesLimit),
      transfer_incoming_bytes_throttle_threshold: c.transferIncomingBytesThrottleThreshold,
      validate: true,
      transition_counter_max: false,
    },
    events,
    data_store_errors: storeErrors,
  };
}

/**
 * Other corners of the stream space than the driver's defaults: each action's weight
 * scaled by 0-3 (some off), up to 8 threads, fractional resources, 1 MB messages.
 */
function mixedOptions(seed: number): Pick<FuzzOptions, "weights" | "config"> {
  const rng = new Rng(seed ^ 0x5bd1e995);
  const weights: Partial<Record<ActionKind, number>> = {};
  for (const [kind, w] of Object.entries(DEFAULT_WEIGHTS)) {
    weights[kind as ActionKind] = rng.chance(0.15) ? 0 : w * rng.pick([0.3, 1, 2, 3]);
  }
  return {
    weights,
    config: {
      nthreads: rng.pick([1, 2, 4, 8]),
      resources: (rng.chance(0.5) ? { R: rng.pick([1.5, 2, 2.5]) } : {}) as Record<string, number>,
      transferMessageBytesLimit: rng.pick([Number.POSITIVE_INFINITY, 1_000_000, 1_000]),
    },
  };
}

const program = new Command()
  .name("oracle-traces")
  .description("write fuzz-driver stimulus streams as traces for tools/oracle/record.py")
  .requiredOption("--out <dir>", "output directory")
  .option("--from <n>", "first seed", "1")
  .option("--count <n>", "number of seeds", "100")
  .option("--steps <n>", "random stimuli per stream (before draining)", "200")
  .option("--max-keys <n>", "size of the task graph (default: the driver's)")
  .option("--mixed", "vary action weights and worker settings per seed")
  .action(
    (o: {
      out: string;
      from: string;
      count: string;
      steps: string;
      maxKeys?: string;
      mixed?: boolean;
    }) => {
      mkdirSync(o.out, { recursive: true });
      const from = nonNegativeInteger(o.from, "--from");
      const count = nonNegativeInteger(o.count, "--count");
      const steps = nonNegativeInteger(o.steps, "--steps");
      const maxKeys =
        o.maxKeys === undefined ? undefined : positiveInteger(o.maxKeys, "--max-keys");
      for (let seed = from; seed < from + count; seed++) {
        const trace = traceOf(seed, steps, maxKeys, o.mixed === true);
        writeFileSync(join(o.out, `seed-${seed}.trace.json`), JSON.stringify(trace));
      }
    },
  );
process.exitCode = await runScript("oracle-traces", async (argv) => {
  program.parse(argv, { from: "user" });
  return 0;
});
