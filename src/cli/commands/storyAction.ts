/**
 * What `weft story` does once its command line is parsed: story.ts, its definition,
 * imports this module only then, so that `weft story --help` loads none of it.
 */

import { existsSync } from "node:fs";
import type { Command } from "commander";
import type { Client } from "../../client/client.ts";
import { ReplayInputError } from "../../replay/errors.ts";
import { unavailableWorkerNote, workerWithoutEntryNote } from "../../replay/formatReport.ts";
import { formatStory, storyJson } from "../../replay/formatStory.ts";
import { inputKindOf } from "../../replay/inputKind.ts";
import { jsonDumpAdviceFor } from "../../replay/jsonDump.ts";
import { tupleKeyForm } from "../../replay/keyArgument.ts";
import { workersWithoutEntry } from "../../replay/missingWorkers.ts";
import { loadDump, replayLoadedDump } from "../../replay/replayDump.ts";
import type { DumpReplayReport, ReplayFailure } from "../../replay/report.ts";
import { clusterStory, liveStory, type StoryLine } from "../../replay/story.ts";
import type { WorkerState } from "../../worker/state/workerState.ts";
import type { ConnectCliOptions } from "./connectOptions.ts";
import { type CliContext, EXIT } from "./context.ts";
import { checkInputExists, withInputErrors } from "./inputErrors.ts";
import { progressBar } from "./progress.ts";
import { schedulerChoiceProblem } from "./schedulerChoice.ts";
import { shellWord } from "./shellWord.ts";
import { sayingItWaits } from "./waitNotice.ts";
import { withClient } from "./withClient.ts";

/** Options of `weft story`. */
export interface StoryOptions extends ConnectCliOptions {
  readonly replay?: boolean;
  readonly followLog?: boolean;
  readonly json?: boolean;
}

/** The flags of a dump's story, as the user gave them. */
const STORY_FLAGS = [
  ["replay", "--replay"],
  ["followLog", "--follow-log"],
  ["json", "--json"],
] as const;

/**
 * The note for a worker whose replay raised: its replayed records stop at that
 * event, so without it the story would look complete while it is cut short.
 */
function failureNote(address: string, f: ReplayFailure, opts: StoryOptions): string {
  const message = f.message.split("\n")[0];
  const hint = opts.followLog
    ? "drop --replay for the dumped records"
    : "try --follow-log, or drop --replay for the dumped records";
  return (
    `weft story: the replay of ${address} stopped at event ${f.eventIndex} ` +
    `(${f.eventClass} ${f.stimulusId}): ${f.error}: ${message}; ` +
    `its replayed records end there (${hint})`
  );
}

/** The options of a running cluster's connection, and their flags. */
const CONNECT_FLAGS = [
  ["connectTimeout", "--connect-timeout"],
  ["tlsCaFile", "--tls-ca-file"],
  ["tlsCert", "--tls-cert"],
  ["tlsKey", "--tls-key"],
  ["maxFrameBytes", "--max-frame-bytes"],
  ["maxMessageBytes", "--max-message-bytes"],
] as const satisfies readonly (readonly [keyof StoryOptions, string])[];

/**
 * A scheduler's address rather than a file: the story is asked of the running
 * cluster. A bare host:port is one, as every other command takes it, unless a
 * file of that name exists (the dump was named so).
 */
function isSchedulerAddress(arg: string): boolean {
  if (/^(tcp|tls):\/\//.test(arg)) return true;
  return /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(arg) && !existsSync(arg);
}

/** Print `lines` (or say there are none, exit 1), as text or JSON. */
function printStory(
  ctx: CliContext,
  lines: readonly StoryLine[],
  keys: readonly string[],
  from: string,
  opts: StoryOptions,
): void {
  if (opts.json) ctx.stdout.write(`${JSON.stringify(storyJson(lines), null, 2)}\n`);
  else if (lines.length > 0) ctx.stdout.write(`${formatStory(lines)}\n`);
  if (lines.length === 0) {
    const listForm = keys.find((k) => /^\[.*\]$/.test(k));
    const hint =
      listForm === undefined
        ? ""
        : ` (a key that was a tuple in Python is written as the tuple: ${listForm.replace(/^\[(.*)\]$/, "($1)")})`;
    ctx.stderr.write(`weft story: no record of ${keys.join(", ")} in ${from}${hint}\n`);
    ctx.exitCode = EXIT.differences;
  }
}

/** The story of `keys` of a running cluster, saying so when its workers are slow to answer. */
function workersStory(ctx: CliContext, client: Client, keys: readonly string[]) {
  return sayingItWaits(ctx, "story", "the workers' stories", () => client.story(...keys));
}

/** `weft story KEY... --scheduler-file FILE`: every argument is a key, asked of the running cluster. */
async function liveStoryFromFile(
  keys: string[],
  opts: StoryOptions,
  cmd: Command,
  ctx: CliContext,
): Promise<void> {
  if (keys.length === 0) cmd.error("error: give at least one key", { exitCode: EXIT.usage });
  const last = keys[keys.length - 1];
  // The scheduler or a dump given as well (where the last argument would be one).
  if (/^(tcp|tls):\/\//.test(last)) {
    cmd.error(`error: ${schedulerChoiceProblem(last, opts.schedulerFile)}`, {
      exitCode: EXIT.usage,
    });
  }
  if (inputKindOf(last) === "dump" && existsSync(last)) {
    cmd.error(
      `error: ${last} is a cluster dump, and --scheduler-file names a running cluster: give one of them`,
      { exitCode: EXIT.usage },
    );
  }
  if (opts.replay || opts.followLog) {
    cmd.error("error: --replay and --follow-log replay a dump, not a running cluster", {
      exitCode: EXIT.usage,
    });
  }
  await withClient("story", { given: undefined, others: keys }, opts, ctx, async (client) => {
    printStory(ctx, liveStory(await workersStory(ctx, client, keys)), keys, client.address, opts);
  });
}

/**
 * `weft story ARGS...` as parsed into `args` and `opts` by `cmd`: the keys, then
 * the dump file or the running cluster's scheduler (keys only with
 * `--scheduler-file`).
 */
export async function runStory(
  args: string[],
  opts: StoryOptions,
  cmd: Command,
  ctx: CliContext,
): Promise<void> {
  if (opts.schedulerFile !== undefined) {
    await liveStoryFromFile(args, opts, cmd, ctx);
    return;
  }
  // Commander allows a variadic argument only last: split KEY... FILE here.
  // The running cluster's form is named too: `weft story KEY` alone is what a user
  // following `weft story inc-41 tcp://…` forgets, and "the dump file" sent them to dump one.
  if (args.length < 2)
    cmd.error(
      "error: give at least one key, then the cluster dump file or the running cluster's scheduler (or --scheduler-file)",
      { exitCode: EXIT.usage },
    );
  const keys = args.slice(0, -1);
  const file = args[args.length - 1];
  // As the running cluster's story refuses one: no record matches "", and the
  // dump's said "no record of  in FILE" (exit 1) for what is bad usage.
  if (keys.some((k) => k === "")) {
    cmd.error("error: a key or stimulus id cannot be empty", { exitCode: EXIT.usage });
  }
  if (isSchedulerAddress(file)) {
    if (opts.replay || opts.followLog) {
      cmd.error("error: --replay and --follow-log replay a dump, not a running cluster", {
        exitCode: EXIT.usage,
      });
    }
    await withClient("story", { given: file }, opts, ctx, async (client) => {
      printStory(ctx, liveStory(await workersStory(ctx, client, keys)), keys, file, opts);
    });
    return;
  }
  // The dump named first, as `weft replay FILE` takes it: the last key was read as
  // the file and said not to exist, with nothing about the order.
  const dumpFirst = keys.find((k) => inputKindOf(k) === "dump" && existsSync(k));
  if (dumpFirst !== undefined && !existsSync(file)) {
    // The user's command to run again: their flags kept, and every word as a shell reads it.
    const flags = STORY_FLAGS.filter(([name]) => opts[name] === true).map(([, flag]) => flag);
    const words = [...flags, ...args.filter((a) => a !== dumpFirst), dumpFirst];
    cmd.error(
      `error: the cluster dump goes last, after the keys: weft story ${words.map(shellWord).join(" ")}`,
      { exitCode: EXIT.usage },
    );
  }
  // A dump is read, not connected to: a connection option given with one (a bad
  // --connect-timeout, TLS files meant for a cluster) was ignored unsaid.
  const connecting = CONNECT_FLAGS.filter(([name]) => opts[name] !== undefined);
  if (connecting.length > 0) {
    cmd.error(
      `error: ${connecting.map(([, flag]) => flag).join(", ")} ${connecting.length === 1 ? "is" : "are"} for a running cluster, and ${file} is read as a cluster dump`,
      { exitCode: EXIT.usage },
    );
  }
  await withInputErrors(ctx, "story", async () => {
    checkInputExists(file);
    if (inputKindOf(file) !== "dump") {
      // A dump written as JSON was said to be none.
      const asJson = inputKindOf(file) === "vector" ? jsonDumpAdviceFor(file) : null;
      throw new ReplayInputError(
        file,
        asJson ?? "not a cluster dump: a story needs one (.msgpack.gz, .yaml, …)",
      );
    }
    const dump = await loadDump(file);
    let replayed: ReadonlyMap<string, WorkerState> | undefined;
    if (opts.replay || opts.followLog) {
      const progress = progressBar(ctx, "replay");
      let report: DumpReplayReport;
      try {
        const replay = replayLoadedDump(dump, {
          followLog: opts.followLog,
          onProgress: progress.update,
        });
        replayed = replay.states;
        report = replay.report;
      } finally {
        progress.stop();
      }
      for (const w of report.workers) {
        if (w.failure !== null) ctx.stderr.write(`${failureNote(w.address, w.failure, opts)}\n`);
      }
    }
    // Their records are not in the dump: the story may be missing parts of it.
    for (const [address, reason] of dump.unavailableWorkers) {
      ctx.stderr.write(
        `${unavailableWorkerNote(address, reason)}: its records are missing from the story\n`,
      );
    }
    for (const address of workersWithoutEntry(dump)) {
      ctx.stderr.write(
        `${workerWithoutEntryNote(address)}: its records are missing from the story\n`,
      );
    }
    // A tuple key typed otherwise than as str() writes it is looked for in that form too.
    const forms = keys.map(tupleKeyForm).filter((k): k is string => k !== null);
    const lines = clusterStory(dump, [...new Set([...keys, ...forms])], { replayed });
    printStory(ctx, lines, keys, file, opts);
  });
}
