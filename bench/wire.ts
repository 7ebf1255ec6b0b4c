/**
 * The TCP wire codec alone (`src/comm/wireCodec.ts`): encodes and decodes
 * batches of the messages that dominate a TCP cluster's traffic, as a
 * `BatchedSend` frames them (one array of 1,000 messages), and prints per kind
 * the median µs per message of each direction and the bytes per message.
 *
 *   npm run bench:wire [-- [--runs 9] [--batch 1000]]
 *
 * Prints one JSON line per message kind.
 */
import { Command } from "commander";
import { positiveInteger } from "../src/bench/benchOptions.ts";
import { median, round } from "../src/bench/stats.ts";
import { decodeMessage, encodeMessage } from "../src/comm/wireCodec.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import { UsageError } from "../src/util/usageError.ts";
import { runScript } from "./benchCli.ts";

const KEY = (i: number): string => `('inc-5b1f0c7e9a2d4c3b8e6f1a0d9c8b7a6e', ${i})`;
const WORKER = "tcp://10.0.0.17:40123";

/** One message of each kind the benchmark encodes, the i-th of its batch. */
export const MESSAGE_KINDS: Record<string, (i: number) => unknown> = {
  // A root task (no inputs): the scheduler's shared empty maps.
  "compute-task-root": (i) => ({
    op: "compute-task",
    key: KEY(i),
    runId: 100_000 + i,
    whoHas: new Map(),
    nbytes: new Map(),
    priority: [0, 1, i],
    duration: 0.5,
    runSpec: { fn: "inc", args: [i] },
    resourceRestrictions: {},
    actor: false,
    annotations: {},
    spanId: null,
    stimulusId: "update-graph-1764577000.123456",
  }),
  // A tree node: two inputs, one of them held elsewhere.
  "compute-task-2-inputs": (i) => ({
    op: "compute-task",
    key: KEY(i),
    runId: 100_000 + i,
    whoHas: new Map([
      [KEY(2 * i), [WORKER]],
      [KEY(2 * i + 1), ["tcp://10.0.0.18:40555"]],
    ]),
    nbytes: new Map([
      [KEY(2 * i), 8],
      [KEY(2 * i + 1), 8],
    ]),
    priority: [0, 1, i],
    duration: 0.5,
    runSpec: { fn: "add", args: [{ __weftRef: KEY(2 * i) }, { __weftRef: KEY(2 * i + 1) }] },
    resourceRestrictions: {},
    actor: false,
    annotations: {},
    spanId: null,
    stimulusId: "task-finished-1764577000.234567",
  }),
  "task-finished": (i) => ({
    op: "task-finished",
    key: KEY(i),
    runId: 100_000 + i,
    nbytes: 8,
    typename: "number",
    startstops: [{ action: "compute", start: 1764577000.1 + i, stop: 1764577000.2 + i }],
    thread: 1,
    stimulusId: `task-finished-${1764577000.1 + i}`,
  }),
  "free-keys": (i) => ({
    op: "free-keys",
    keys: [KEY(2 * i), KEY(2 * i + 1)],
    stimulusId: `task-finished-${1764577000.1 + i}`,
  }),
};

/** Options of a run. */
export interface WireBenchOptions {
  readonly runs: number;
  readonly batch: number;
}

/** Run the benchmark; calls `emit` with one record per message kind. */
export function benchWire(
  o: WireBenchOptions,
  emit: (record: Record<string, unknown>) => void,
): void {
  for (const [kind, make] of Object.entries(MESSAGE_KINDS)) {
    const batch = Array.from({ length: o.batch }, (_, i) => make(i));
    // Enough rounds a run that a run lasts tens of milliseconds at the expected speed.
    const rounds = Math.max(1, Math.round(20_000 / o.batch));
    const encodeUs: number[] = [];
    const decodeUs: number[] = [];
    let bytes = 0;
    for (let run = -2; run < o.runs; run++) {
      let encoded = encodeMessage(batch);
      const t0 = performance.now();
      for (let r = 0; r < rounds; r++) encoded = encodeMessage(batch);
      const t1 = performance.now();
      let decoded: unknown;
      for (let r = 0; r < rounds; r++) decoded = decodeMessage(encoded.payload, encoded.buffers);
      const t2 = performance.now();
      if (!Array.isArray(decoded) || decoded.length !== o.batch) {
        throw new Error(`${kind}: the batch did not come back whole`);
      }
      bytes = encoded.payload.byteLength;
      // The first two runs warm the optimising compiler up and are not counted.
      if (run < 0) continue;
      encodeUs.push(((t1 - t0) * 1000) / (rounds * o.batch));
      decodeUs.push(((t2 - t1) * 1000) / (rounds * o.batch));
    }
    emit({
      bench: "wire",
      kind,
      batch: o.batch,
      runs: o.runs,
      encodeUsPerMessage: round(median(encodeUs), 3),
      decodeUsPerMessage: round(median(decodeUs), 3),
      bytesPerMessage: round(bytes / o.batch, 1),
    });
  }
}

/**
 * The largest `--batch`: 100,000 messages a batch take seconds a kind; a million
 * minutes, and 100,000,000 ended in V8's out-of-memory abort.
 */
export const MAX_BATCH = 100_000;

/** `--runs` and `--batch` as given to commander, checked. */
export function wireOptions(opts: Readonly<Record<string, string>>): WireBenchOptions {
  const batch = positiveInteger(opts.batch, "--batch");
  if (batch > MAX_BATCH) throw new UsageError(`--batch must be at most ${MAX_BATCH}, got ${batch}`);
  return { runs: positiveInteger(opts.runs, "--runs"), batch };
}

/** The command line: `--runs`, `--batch`. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command("bench:wire")
    .description(
      "The TCP wire codec alone: encode and decode batches of typical scheduler and worker messages; median µs per message",
    )
    .option("--runs <n>", "timed runs per message kind", "9")
    .option("--batch <n>", `messages per batch (one frame; at most ${MAX_BATCH})`, "1000")
    .exitOverride();
  program.parse([...argv], { from: "user" });
  const opts = program.opts<Record<string, string>>();
  benchWire(wireOptions(opts), (r) => console.log(JSON.stringify(r)));
  return 0;
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  process.exitCode = await runScript("bench:wire", main);
}
