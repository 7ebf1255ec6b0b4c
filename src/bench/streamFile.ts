/**
 * The benchmark streams' file format (../shared/bench/README.md): a header line, one
 * event per line, and a last line with what the reference's replay ended with. Shared
 * by `bench:state` and the sides of `bench:state-ab`; it imports nothing of the state
 * machine, since a side decodes events with the code of the checkout it runs.
 */

import { readFailure } from "../util/readFailure.ts";
import { UsageError } from "../util/usageError.ts";

/**
 * The clock a timed replay gives the state machine, in `bench:state` and both sides
 * of `bench:state-ab`: seconds since the epoch, as Python's `time.time()`, since the
 * reference reads `time()` for its logs when its figures were measured (not the
 * recordings' zero clock).
 */
export const wallClock = (): number => Date.now() / 1000;

/** What a faithful replay of a stream ends with. */
export interface StreamFinal {
  readonly events: number;
  readonly instructions: number;
  readonly transition_counter: number;
  readonly tasks: number;
}

/** A stream's text, parsed; `decode` turns each event line's JSON into an event. */
export interface ParsedStream<E> {
  readonly name: string;
  readonly config: Record<string, unknown>;
  readonly events: E[];
  readonly final: StreamFinal;
}

export function parseStream<E>(
  text: string,
  path: string,
  decode: (dict: Record<string, unknown>) => E,
): ParsedStream<E> {
  // Line numbers as an editor shows them: blank lines are skipped but counted.
  const lines = text
    .split("\n")
    .map((line, i) => ({ line, number: i + 1 }))
    .filter((l) => l.line.length > 0);
  if (lines.length < 2) throw new UsageError(`${path}: no header and final line`);
  const json = (l: { line: string; number: number }): unknown => {
    try {
      return JSON.parse(l.line);
    } catch (err) {
      throw new UsageError(`${path}: line ${l.number}: ${(err as Error).message}`);
    }
  };
  const header = json(lines[0]) as { name?: string; config?: Record<string, unknown> } | null;
  if (typeof header?.config !== "object" || header.config === null) {
    throw new UsageError(`${path}: line ${lines[0].number}: the header has no config`);
  }
  const last = json(lines[lines.length - 1]) as { final?: StreamFinal } | null;
  const final = last?.final;
  if (final === undefined) throw new UsageError(`${path}: the last line has no "final" record`);
  const events = lines.slice(1, -1).map((l) => {
    const d = json(l);
    if (typeof d !== "object" || d === null || Array.isArray(d)) {
      throw new UsageError(`${path}: line ${l.number} is not an object`);
    }
    try {
      return decode(d as Record<string, unknown>);
    } catch (err) {
      throw new UsageError(`${path}: line ${l.number}: ${(err as Error).message}`, { cause: err });
    }
  });
  if (events.length !== final.events) {
    throw new UsageError(
      `${path}: ${events.length} events, but the final line says ${final.events}`,
    );
  }
  return { name: header.name ?? path, config: header.config, events, final };
}

/**
 * Read the stream file `path` with `read` (a checkout's `readMaybeGzip`) and parse it.
 * Every error is a UsageError (an input the benchmark cannot read: exit 2) naming the
 * file: one `read` throws too (a gzip stream cut short, which zlib says only
 * "unexpected end of file" of, is "truncated gzip data").
 */
export function readStream<E>(
  path: string,
  read: (path: string) => string,
  decode: (dict: Record<string, unknown>) => E,
): ParsedStream<E> {
  let text: string;
  try {
    text = read(path);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const why = readFailure(err) ?? message;
    throw new UsageError(why.includes(path) ? why : `${path}: ${why}`);
  }
  return parseStream(text, path, decode);
}

/** How a replay's end differs from the stream's final line, or null when it does not. */
export function finalMismatch(
  got: { instructions: number; transition_counter: number; tasks: number },
  want: StreamFinal,
): string | null {
  if (
    got.instructions === want.instructions &&
    got.transition_counter === want.transition_counter &&
    got.tasks === want.tasks
  ) {
    return null;
  }
  const expected = {
    instructions: want.instructions,
    transition_counter: want.transition_counter,
    tasks: want.tasks,
  };
  // The three counts only: a caller's record may carry more (bench:lean's has the seconds).
  const ended = {
    instructions: got.instructions,
    transition_counter: got.transition_counter,
    tasks: got.tasks,
  };
  return `got ${JSON.stringify(ended)}, expected ${JSON.stringify(expected)}`;
}
