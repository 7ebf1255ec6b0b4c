import type { DumpEncoding } from "../protocol/clusterDump.ts";
import type { TaskMismatch } from "./taskComparison.ts";

/** Where the replayed log first differs from the dumped log. */
export interface LogDivergence {
  /** Index in the stimulus log of the event whose records differ. */
  readonly eventIndex: number;
  /** Its class (`FindMissingEvent` for one the replay added: Dask does not log those). */
  readonly eventClass: string;
  /** Its stimulus id. */
  readonly stimulusId: string;
  /** Position of the differing record among that stimulus's records. */
  readonly recordIndex: number;
  /** The dumped record, as Python prints it (null: the dump has no more records). */
  readonly expected: string | null;
  /** The replayed record (null: the replay has no more records). */
  readonly replayed: string | null;
  /** Dumped records of that stimulus the replay does not have. */
  readonly missing: number;
  /** Replayed records of that stimulus the dump does not have. */
  readonly extra: number;
}

/** The state machine raised while replaying an event. */
export interface ReplayFailure {
  /** Index of the event in the stimulus log (or in the stream). */
  readonly eventIndex: number;
  /** The class of the event being handled (`ComputeTaskEvent`, …). */
  readonly eventClass: string;
  /** That event's stimulus ID. */
  readonly stimulusId: string;
  /** The error's class name (`InvalidTransition`, `AssertionError`, `KeyError`, …). */
  readonly error: string;
  /** Its message (a story included when the error carries one). */
  readonly message: string;
  /** The log records of the event's tasks and stimulus, as Python prints them. */
  readonly story: readonly string[];
}

/** The replay of one worker of a dump. */
export interface WorkerReplayReport {
  /** The worker's address. */
  readonly address: string;
  /** `--follow-log` was on. */
  readonly followLog: boolean;
  /** How many events there were, and what became of them. */
  readonly events: {
    /** Events in the dumped stimulus log. */
    readonly inLog: number;
    /** Events handed to the state machine. */
    readonly replayed: number;
    /** Events left out: they refer to what happened before the stimulus log. */
    readonly skipped: number;
    /** `FindMissingEvent`s replayed where the dumped log shows one (Dask does not log them). */
    readonly findMissing: number;
  };
  /** Whether the dumped logs reach back to the worker's start. */
  readonly coverage: {
    readonly stimulusLogFromStart: boolean;
    readonly logFromStart: boolean;
    /** What was found, in words. */
    readonly notes: readonly string[];
  };
  /** The transition counter the replay reached, against the dumped one. */
  readonly transitionCounter: {
    readonly replayed: number;
    readonly dumped: number;
    /** False when the stimulus log does not reach back to the worker's start. */
    readonly comparable: boolean;
    readonly equal: boolean;
  };
  /** The replayed log checked against the dumped log, stimulus by stimulus. */
  readonly log: {
    /** Stimuli whose records were checked. */
    readonly checkedStimuli: number;
    /** Dumped records checked. */
    readonly checkedRecords: number;
    /** Stimuli with the same records in the same order. */
    readonly equal: number;
    /** Stimuli with the same records in another order (Python's set order). */
    readonly reordered: number;
    /** Stimuli with different records. */
    readonly divergent: number;
    /** The first reordering, if any. */
    readonly firstReordering: LogDivergence | null;
    /** The first divergence, if any. */
    readonly firstDivergence: LogDivergence | null;
    /**
     * Stimuli with different records while the stimulus log is known not to reach back
     * to the worker's start: they may depend on what came before (their tasks are then
     * not compared). Not counted as divergent.
     */
    readonly unverifiable: number;
    /** The first unverifiable stimulus, if any. */
    readonly firstUnverifiable: LogDivergence | null;
    /** Dumped records of stimuli the stimulus log does not hold (not replayable). */
    readonly unexplainedRecords: number;
    /** With `--follow-log`: choices taken from the dumped log. */
    readonly steered: { readonly recommendations: number; readonly gathers: number } | null;
  };
  /** The state machine raised; the replay stopped there. */
  readonly failure: ReplayFailure | null;
  /** The tasks compared with the dump's (none after a failure). */
  readonly tasks: {
    readonly dumped: number;
    readonly replayed: number;
    readonly compared: number;
    readonly notComparable: number;
    /**
     * Without the worker's start, the generation counter (the last element of each
     * task priority) starts elsewhere: the shift applied to replayed priorities.
     */
    readonly generationOffset: number;
    readonly mismatches: readonly TaskMismatch[];
  };
  /**
   * - `exact`: replayed to the end, reaching the dumped counter and tasks (where
   *   comparable), every record as dumped (up to order);
   * - `converged`: the same end, but the log diverged on the way (usually at a choice
   *   that Python's set order made differently, which is not proven here: an `exact`
   *   verdict with `--follow-log`, which follows the dumped choices, shows it);
   * - `diverged`: the counter or some tasks differ from the dump;
   * - `failed`: the state machine raised;
   * - `uncompared`: replayed to the end without raising, but nothing could be
   *   compared: the logs do not reach back to the worker's start (so the counter
   *   is not comparable), no record was checked and no task compared. Not `ok`:
   *   the dump was not shown to agree.
   */
  readonly verdict: WorkerVerdict;
  /**
   * `exact`, or `converged` without `--follow-log` (with it, the dumped choices were
   * followed, so set order cannot explain the log's divergence).
   */
  readonly ok: boolean;
}

/** See {@link WorkerReplayReport.verdict}. */
export type WorkerVerdict = "exact" | "converged" | "diverged" | "failed" | "uncompared";

/** The replay of a cluster dump. */
export interface DumpReplayReport {
  /** Tags the report as a dump's. */
  readonly kind: "dump";
  /** The dump's path. */
  readonly file: string;
  /** How the dump is written (msgpack or YAML, gzipped or not). */
  readonly encoding: DumpEncoding;
  /** `versions.distributed` of the dump. */
  readonly distributed: string | null;
  /** The replay of each worker in the dump. */
  readonly workers: readonly WorkerReplayReport[];
  /** Workers that did not answer the dump: `{address, reason}`. */
  readonly unavailableWorkers: readonly { readonly address: string; readonly reason: string }[];
  /**
   * Workers the scheduler's record lists that the dump holds no entry for: the file
   * may be cut short (a YAML dump cut before a worker's entry still reads), or a
   * worker left while weft's own dump was taken. They are not replayed.
   */
  readonly workersWithoutEntry: readonly string[];
  /** Every worker's `ok`: `exact`, or `converged` without `--follow-log`. */
  readonly ok: boolean;
}

/** The replay of a conformance vector (as `npm run conformance` does it). */
export interface VectorReplayReport {
  /** Tags the report as a conformance vector's. */
  readonly kind: "vector";
  /** The vector's path. */
  readonly file: string;
  /** The vector's name. */
  readonly name: string;
  /** How many steps it has. */
  readonly steps: number;
  /** Order-sensitive vectors are skipped (FORMAT.md). */
  readonly skipped: boolean;
  /** The recorded transition counter after the last step that has a state. */
  readonly transitionCounter: number | null;
  /** The first step that differs, or null. */
  readonly mismatch: {
    readonly step: number;
    readonly what: string;
    readonly event: string;
    readonly details: readonly string[];
  } | null;
  /** Every step matched (or the vector was skipped). */
  readonly ok: boolean;
}

/** The replay of a stimulus stream (`../shared/bench/*.jsonl.gz`). */
export interface StreamReplayReport {
  /** Tags the report as a stimulus stream's. */
  readonly kind: "stream";
  /** The stream's path. */
  readonly file: string;
  /** The stream's name, from its header. */
  readonly name: string;
  /** How many events were replayed. */
  readonly events: number;
  /** How many instructions the state machine gave for them, in total. */
  readonly instructions: number;
  /** The transition counter the replay reached. */
  readonly transitionCounter: number;
  /** How many tasks the state machine holds at the end. */
  readonly tasks: number;
  /** The stream's last line, when it has one: what the reference produced. */
  readonly final: {
    readonly events: number;
    readonly instructions: number;
    readonly transitionCounter: number;
    readonly tasks: number;
  } | null;
  /** Fields of `final` the replay does not match. */
  readonly finalMismatches: readonly string[];
  /** Where the state machine raised, or null when it did not. */
  readonly failure: ReplayFailure | null;
  /** No failure, and `final` (if any) matched. */
  readonly ok: boolean;
}

/** What `weft replay` reports for any input. */
export type ReplayReport = DumpReplayReport | VectorReplayReport | StreamReplayReport;
