/**
 * One side of `bench:state-ab`, in a process of its own (forked by `stateAb.ts`, with
 * `--expose-gc`): replays benchmark streams through the worker state machine of the
 * checkout at `root`, decoded by that checkout's own codec.
 *
 *   (forked) stateAbSide.ts ROOT DIR
 *
 * Messages (pairedSides.ts): `{ op: "ready" }` once it has loaded its modules; to
 * `{ op: "run", id, name }` it replays `DIR/<name>.jsonl.gz` once (decoded on first
 * use; the previous replay's state machine collected first; the wall clock, as
 * `bench:state` gives it; only `handleStimulus` timed) and answers `{ id, seconds }` if the replay ends as the stream's final line
 * says, `{ id, error }` otherwise; `{ op: "close" }` exits.
 */

import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  finalMismatch,
  type ParsedStream,
  readStream,
  wallClock,
} from "../src/bench/streamFile.ts";
import { exitQuietlyWhenStdoutCloses, isEntryPoint } from "../src/util/entryPoint.ts";
import type { SideReply, SideRequest } from "./pairedSides.ts";

/** The files a checkout must have to take part. */
export function checkoutFiles(root: string): { conformance: string; events: string } {
  return {
    conformance: join(root, "src/protocol/conformance.ts"),
    events: join(root, "src/protocol/daskJson/events.ts"),
  };
}

/** Why `root` cannot take part, or null. */
export function checkoutProblem(root: string): string | null {
  for (const f of Object.values(checkoutFiles(root))) {
    if (!existsSync(f)) return `${root} is not a weft checkout: ${f} is missing`;
  }
  return null;
}

/** The parts of a checkout's state machine a replay needs. */
export interface StateMachine {
  handleStimulus(...events: unknown[]): readonly unknown[];
  validate: boolean;
  readonly transitionCounter: number;
  readonly tasks: { readonly size: number };
}

/** The parts of a checkout's modules a side uses. */
export interface Modules {
  readMaybeGzip(path: string): string;
  workerStateFromConfig(
    config: unknown,
    where: string,
    data: Map<string, unknown>,
    clock: () => number,
  ): StateMachine;
  eventFromDict(d: unknown): unknown;
}

type Stream = ParsedStream<unknown>;

function send(reply: SideReply): void {
  process.send?.(reply);
}

function loadStream(m: Modules, path: string): Stream {
  return readStream<unknown>(
    path,
    (p) => m.readMaybeGzip(p),
    (d) => m.eventFromDict(d),
  );
}

/**
 * Replay `stream` once through a state machine of `m` and return the seconds its
 * `handleStimulus` calls took; throws if it ends elsewhere than the stream says.
 */
export function replay(m: Modules, stream: Stream, name: string): number {
  (globalThis as { gc?: () => void }).gc?.();
  const ws = m.workerStateFromConfig(stream.config, name, new Map(), wallClock);
  ws.validate = false;
  const events = stream.events;
  let instructions = 0;
  const t0 = performance.now();
  for (let i = 0; i < events.length; i++) instructions += ws.handleStimulus(events[i]).length;
  const seconds = (performance.now() - t0) / 1000;
  const got = { instructions, transition_counter: ws.transitionCounter, tasks: ws.tasks.size };
  const mismatch = finalMismatch(got, stream.final);
  if (mismatch !== null) throw new Error(`${name}: ${mismatch}`);
  return seconds;
}

async function serve(root: string, dir: string): Promise<void> {
  const problem = checkoutProblem(root);
  if (problem !== null) throw new Error(problem);
  const files = checkoutFiles(root);
  const m = {
    ...(await import(pathToFileURL(files.conformance).href)),
    ...(await import(pathToFileURL(files.events).href)),
  } as Modules;
  const streams = new Map<string, Stream>();
  process.on("message", (req: SideRequest) => {
    if (req.op === "close") process.exit(0);
    try {
      let stream = streams.get(req.name);
      if (stream === undefined) {
        stream = loadStream(m, join(dir, `${req.name}.jsonl.gz`));
        streams.set(req.name, stream);
      }
      send({ id: req.id, seconds: replay(m, stream, req.name) });
    } catch (err) {
      send({ id: req.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
  send({ op: "ready" });
}

if (isEntryPoint(import.meta.url)) {
  exitQuietlyWhenStdoutCloses();
  const [root, dir] = process.argv.slice(2);
  serve(root, dir).catch((err: unknown) => {
    send({ op: "failed", error: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  });
}
