import { checkKnownOptions, type OptionNames } from "../util/knownOptions.ts";
import { showValue } from "../util/showValue.ts";
import type { WorkerState } from "../worker/state/workerState.ts";
import { checkFileArgument, ReplayInputError } from "./errors.ts";
import { INPUT_EXTENSIONS, inputKindOf } from "./inputKind.ts";
import { replayDump } from "./replayDump.ts";
import type { ReplayReport } from "./report.ts";
import { checkStreamHeader, replayStreamFile } from "./streamReplay.ts";
import { readVectorFile, replayVectorFile } from "./vectorReplay.ts";

/** Options of {@link replayFile}. */
export interface ReplayFileOptions {
  /** Dumps only: follow the dumped log's set-order choices (see LogFollower). */
  readonly followLog?: boolean;
  /** Dumps only: replay only these workers. */
  readonly workers?: readonly string[];
  /** Progress in events (dumps and streams); what it throws ends the replay and is rethrown. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** A replayed file: its report and, for a dump, each worker's state machine. */
export interface FileReplay {
  /** What the replay found. */
  readonly report: ReplayReport;
  /** For a dump, each worker's state machine as the replay left it, by address; empty otherwise. */
  readonly states: ReadonlyMap<string, WorkerState>;
}

const OPTION_NAMES: OptionNames<ReplayFileOptions> = {
  followLog: true,
  workers: true,
  onProgress: true,
};

/**
 * Throws a TypeError for options a program got wrong: a misspelt name was dropped
 * and `followLog: "false"`, truthy, followed the log of a dump.
 */
function checkOptions(options: ReplayFileOptions): void {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TypeError(`replayFile: the options must be an object, got ${showValue(options)}`);
  }
  checkKnownOptions("replayFile", options, OPTION_NAMES);
  const { followLog, workers, onProgress } = options;
  if (followLog !== undefined && typeof followLog !== "boolean") {
    throw new TypeError(`followLog must be a boolean, got ${showValue(followLog)}`);
  }
  if (
    workers !== undefined &&
    !(Array.isArray(workers) && workers.every((w) => typeof w === "string"))
  ) {
    throw new TypeError(`workers must be a list of addresses (strings), got ${showValue(workers)}`);
  }
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw new TypeError(`onProgress must be a function, got ${showValue(onProgress)}`);
  }
}

/**
 * Throws ReplayInputError when `file` is a vector or a stream and some of `used`,
 * the names of dump-only options given (false for one not given), is there. The
 * names are the caller's: replayFile's options (`workers`), weft replay's flags
 * (`--worker`), so that an error names what its reader wrote. A file named as a
 * vector or a stream is read first: one of another kind is told what it is (a
 * dump named `.json`: the name to give it), as without the options.
 */
export function refuseDumpOnlyOptions(file: string, used: readonly (string | false)[]): void {
  const kind = inputKindOf(file);
  if (kind !== "vector" && kind !== "stream") return;
  const dumpOnly = used.filter((o) => o !== false);
  if (dumpOnly.length === 0) return;
  // Read first: a file named as the other kind, or a dump named .json, is told
  // what it is and the name to give it, not called the kind its name says.
  if (kind === "vector") readVectorFile(file);
  else checkStreamHeader(file);
  throw new ReplayInputError(
    file,
    `${dumpOnly.join(" and ")} ${dumpOnly.length === 1 ? "applies" : "apply"} to cluster dumps only, and this is a ${kind === "vector" ? "conformance vector" : "stimulus stream"}`,
  );
}

/**
 * Replays a cluster dump, a conformance vector or a stimulus stream, as its extension
 * says (see {@link inputKindOf}). Throws ReplayInputError, with a one-line message
 * naming the file, for an unknown kind or an unreadable, truncated or corrupt file,
 * and TypeError for an unknown option or one of the wrong type.
 */
export async function replayFile(
  file: string,
  options: ReplayFileOptions = {},
): Promise<FileReplay> {
  checkFileArgument("replayFile", file);
  checkOptions(options);
  refuseDumpOnlyOptions(file, [
    options.followLog === true && "followLog",
    options.workers !== undefined && "workers",
  ]);
  const kind = inputKindOf(file);
  switch (kind) {
    case "dump":
      return replayDump(file, options);
    case "vector":
      return { report: replayVectorFile(file), states: new Map() };
    case "stream":
      return {
        report: replayStreamFile(file, { onProgress: options.onProgress }),
        states: new Map(),
      };
    default:
      throw new ReplayInputError(file, `unknown kind of file: expected ${INPUT_EXTENSIONS}`);
  }
}
