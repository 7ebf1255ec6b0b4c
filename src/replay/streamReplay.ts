import { readMaybeGzip, workerStateFromConfig } from "../protocol/conformance.ts";
import { eventFromDict } from "../protocol/daskJson/events.ts";
import { type Dict, isDict } from "../protocol/daskJson/fields.ts";
import { unawaitedCallback } from "../util/unawaitedCallback.ts";
import type { StateMachineEvent } from "../worker/state/events.ts";
import { ReplayInputError, toInputError } from "./errors.ts";
import { replayFailure } from "./failure.ts";
import type { ReplayFailure, StreamReplayReport } from "./report.ts";

/** The parts of a stimulus stream (`../shared/bench/README.md`). */
export interface Stream {
  /** The stream's name, from its header. */
  readonly name: string;
  /**
   * The WorkerState's configuration, from the header (as in the conformance vectors' FORMAT.md).
   */
  readonly config: Record<string, unknown>;
  /** The events, in order. */
  readonly events: StateMachineEvent[];
  /** What the reference produced (the stream's last line), or null when the stream has none. */
  readonly final: StreamReplayReport["final"];
}

function finalLine(file: string, line: number, v: unknown): NonNullable<Stream["final"]> {
  const f = isDict(v) ? v : {};
  const num = (k: string): number => {
    const n = f[k];
    if (typeof n !== "number") {
      throw new ReplayInputError(file, `line ${line}: final.${k}: expected a number`);
    }
    return n;
  };
  return {
    events: num("events"),
    instructions: num("instructions"),
    transitionCounter: num("transition_counter"),
    tasks: num("tasks"),
  };
}

/** A stream's lines, trailing blank lines dropped, and a reader of line `i` as JSON. */
function streamLines(file: string): { lines: string[]; parse: (i: number) => unknown } {
  let text: string;
  try {
    text = readMaybeGzip(file);
  } catch (err) {
    throw toInputError(file, err);
  }
  const lines = text.split("\n");
  while (lines.length > 0 && lines[lines.length - 1].trim() === "") lines.pop();
  if (lines.length === 0) throw new ReplayInputError(file, "the stream is empty");
  const parse = (i: number): unknown => {
    try {
      return JSON.parse(lines[i]);
    } catch (err) {
      const why = i === lines.length - 1 ? " (is the file cut short?)" : "";
      throw new ReplayInputError(
        file,
        `line ${i + 1}: not valid JSON${why}: ${(err as Error).message}`,
      );
    }
  };
  return { lines, parse };
}

/** A stream's first line: its name and the WorkerState's configuration. */
type StreamHeader = Dict & { readonly config: Dict };

/** The header of the stream whose line reader is `parse`; throws ReplayInputError for none. */
function streamHeader(file: string, parse: (i: number) => unknown): StreamHeader {
  const header = parse(0);
  if (!isDict(header) || !isDict(header.config)) {
    throw new ReplayInputError(
      file,
      'line 1: not a stimulus stream header (expected {"name", "config", …})',
    );
  }
  // A vector has a name and a config too: read as a header, it replayed nothing and passed.
  if (Object.hasOwn(header, "steps")) {
    throw new ReplayInputError(
      file,
      'line 1: a conformance vector (it has "steps"), not a stimulus stream header: name it .json',
    );
  }
  return header as StreamHeader;
}

/**
 * Throws ReplayInputError when `file` cannot be read or does not start as a
 * stimulus stream does (saying so of a vector named `.jsonl`); its events are
 * not read.
 */
export function checkStreamHeader(file: string): void {
  streamHeader(file, streamLines(file).parse);
}

/** Reads a stream: a header line, one event per line, and maybe the `final` line. */
export function readStream(file: string): Stream {
  const { lines, parse } = streamLines(file);
  const header = streamHeader(file, parse);
  const events: StateMachineEvent[] = [];
  let final: Stream["final"] = null;
  for (let i = 1; i < lines.length; i++) {
    const d = parse(i);
    if (isDict(d) && "final" in d) {
      if (i !== lines.length - 1) {
        throw new ReplayInputError(file, `line ${i + 1}: the final line is not the last`);
      }
      final = finalLine(file, i + 1, d.final);
      break;
    }
    try {
      events.push(eventFromDict(d));
    } catch (err) {
      throw new ReplayInputError(file, `line ${i + 1}: ${(err as Error).message}`);
    }
  }
  // As a vector with no steps: a replay of nothing would pass having checked nothing.
  if (events.length === 0 && final === null) {
    throw new ReplayInputError(
      file,
      "the stream has no event and no final line after its header: nothing to replay or check (is it cut after line 1?)",
    );
  }
  const name = typeof header.name === "string" ? header.name : file;
  return { name, config: header.config, events, final };
}

/** Options of {@link replayStreamFile}. */
export interface ReplayStreamOptions {
  /** Progress: events replayed so far, of `total`. */
  readonly onProgress?: (done: number, total: number) => void;
}

/**
 * Replays a stimulus stream on a WorkerState built from its header's config and,
 * when the stream has its last line, checks what the reference produced: the number
 * of events and instructions, the transition counter and the number of tasks. A
 * stream cut after any line (e.g. its first N lines) replays, with nothing to check.
 */
export function replayStreamFile(
  file: string,
  options: ReplayStreamOptions = {},
): StreamReplayReport {
  const stream = readStream(file);
  let ws: ReturnType<typeof workerStateFromConfig>;
  try {
    ws = workerStateFromConfig(stream.config, `${file}: line 1: config`);
  } catch (err) {
    throw toInputError(file, err);
  }
  const total = stream.events.length;
  const progressEvery = Math.max(1, Math.floor(total / 200));
  const onProgress =
    options.onProgress && unawaitedCallback(options.onProgress, "replayStreamFile: onProgress");
  onProgress?.(0, total);
  let instructions = 0;
  let events = 0;
  let failure: ReplayFailure | null = null;
  for (const ev of stream.events) {
    try {
      instructions += ws.handleStimulus(ev).length;
    } catch (err) {
      failure = replayFailure(ws, ev, events, err);
      break;
    }
    events++;
    if (events % progressEvery === 0) onProgress?.(events, total);
  }
  onProgress?.(total, total);
  const finalMismatches: string[] = [];
  const f = stream.final;
  if (f !== null && failure === null) {
    const got = {
      events,
      instructions,
      transitionCounter: ws.transitionCounter,
      tasks: ws.tasks.size,
    };
    for (const k of ["events", "instructions", "transitionCounter", "tasks"] as const) {
      if (got[k] !== f[k]) finalMismatches.push(`${k}: expected ${f[k]}, replayed ${got[k]}`);
    }
  }
  return {
    kind: "stream",
    file,
    name: stream.name,
    events,
    instructions,
    transitionCounter: ws.transitionCounter,
    tasks: ws.tasks.size,
    final: f,
    finalMismatches,
    failure,
    ok: failure === null && finalMismatches.length === 0,
  };
}
