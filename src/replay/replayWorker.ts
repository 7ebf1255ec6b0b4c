import type { ClusterDump, WorkerDump } from "../protocol/clusterDump.ts";
import { formatLogEntry } from "../worker/state/errors.ts";
import { FindMissingEvent, type StateMachineEvent } from "../worker/state/events.ts";
import type { LogEntry } from "../worker/state/log.ts";
import { WorkerState } from "../worker/state/workerState.ts";
import { ReplayClock } from "./clock.ts";
import { type LogCoverage, logCoverage } from "./coverage.ts";
import { decodeStimulusLog } from "./dumpEvents.ts";
import { askedAddress, ReplayInputError } from "./errors.ts";
import { type EventGroup, eventGroups } from "./eventGroups.ts";
import { ExpectedLog } from "./expectedLog.ts";
import { replayFailure } from "./failure.ts";
import { LogFollower } from "./follower.ts";
import { LogChecker } from "./logChecker.ts";
import { type ComparableRecord, comparableRecord } from "./records.ts";
import type { ReplayFailure, WorkerReplayReport, WorkerVerdict } from "./report.ts";
import { Taint } from "./taint.ts";
import { compareTasks } from "./taskComparison.ts";
import { unknownReference } from "./unknownReference.ts";
import { applyThrottleThreshold, workerStateOptions } from "./workerConfig.ts";

/** Options of {@link replayWorker}. */
export interface ReplayWorkerOptions {
  /**
   * Steer the choices that depended on Python's set order to match the dumped log
   * (see {@link LogFollower}). Off: the port's own deterministic choices.
   */
  readonly followLog?: boolean;
  /** Called after each event handed to the state machine (for progress bars). */
  readonly onEvent?: () => void;
}

/** A replayed worker: the report and the state machine as the replay left it. */
export interface WorkerReplay {
  /** What the replay found. */
  readonly report: WorkerReplayReport;
  /** The state machine as the replay left it. */
  readonly state: WorkerState;
}

/** The records `ws` logged after the clock reading `since`, oldest first. */
function recordsSince(ws: WorkerState, since: number): LogEntry[] {
  const out: LogEntry[] = [];
  for (let i = -1; ; i--) {
    const r = ws.log.at(i);
    if (r === undefined) break;
    const t = r[r.length - 1];
    if (typeof t !== "number" || t <= since) break;
    out.push(r);
  }
  return out.reverse();
}

/** One event to replay, with its index in the stimulus log. */
interface Step {
  readonly ev: StateMachineEvent;
  readonly index: number;
}

/**
 * Rebuilds one worker of a cluster dump: a WorkerState configured as the dumped
 * Worker configured its own is fed the worker's stimulus log in order, and every
 * stimulus's records are checked against the dumped log as soon as it is replayed.
 * Then the transition counter and the tasks are compared with the dump's.
 *
 * - The replay goes on after a divergence (the report keeps the first) and stops
 *   where the state machine raises (the report has the error and the story).
 * - `FindMissingEvent`s are not in Dask's stimulus log: where the dumped log shows
 *   one's records, the same event is replayed there.
 * - When the logs do not reach back to the worker's start, events that refer to what
 *   came before are skipped, and the tasks they touch (and the tasks linked to those)
 *   are neither checked in the log nor compared; the counter is then not comparable.
 *
 * Throws ReplayInputError when an event of the stimulus log cannot be decoded, or
 * when the stimulus log or the log goes back in time.
 */
export function replayWorker(
  dump: ClusterDump,
  address: string,
  options: ReplayWorkerOptions = {},
): WorkerReplay {
  const w = dump.workers.get(address);
  if (w === undefined)
    throw new Error(`${dump.file}: no worker ${askedAddress(address)} in the dump`);
  const events = decodeStimulusLog(
    dump.file,
    address,
    w.stimulusLog,
    dump.scheduler,
    w.tasks,
    dump.versions.distributed,
  );
  checkLogRecords(dump.file, address, w.log);
  checkTimeOrder(dump.file, address, events, w.log);
  let replayer: WorkerReplayer;
  try {
    replayer = new WorkerReplayer(w, events, options);
  } catch (err) {
    // The dump's settings (nthreads, connections, memory limit, resources) that a
    // state machine refuses: the input's fault, said as such.
    if (!(err instanceof TypeError || err instanceof RangeError)) throw err;
    throw new ReplayInputError(
      dump.file,
      `workers[${JSON.stringify(address)}]: its settings cannot make a worker state machine: ${err.message}`,
      { cause: err },
    );
  }
  return replayer.run();
}

/**
 * Every record of a worker log ends with its stimulus id and time (Dask's
 * `(…, stimulus_id, time())`); the log check reads both there. A record without
 * them is refused here, or `undefined` would stand in for its stimulus in the report;
 * so is a NaN or infinite time, which the search for the log's start by time misreads.
 */
function checkLogRecords(file: string, address: string, log: WorkerDump["log"]): void {
  for (let i = 0; i < log.length; i++) {
    const e = log[i];
    const n = e.length;
    const time = e[n - 1];
    if (n >= 3 && typeof e[n - 2] === "string" && typeof time === "number" && Number.isFinite(time))
      continue;
    throw new ReplayInputError(
      file,
      `workers[${JSON.stringify(address)}].log[${i}]: expected a record ending with its stimulus id and time, got ${formatLogEntry(e)}`,
    );
  }
}

/**
 * Both logs are appended as the worker goes, each entry stamped with the same clock,
 * so their times never go back. The replay relies on it: it finds where the log
 * starts relative to the stimulus log by time, and ends a reused stimulus id's
 * records at the next handling time. Out of order (a corrupt or edited dump), those
 * guesses skip events and taint tasks, and a replay that compared nothing came out
 * "exact as far as comparable": refused here instead.
 */
function checkTimeOrder(
  file: string,
  address: string,
  events: readonly StateMachineEvent[],
  log: WorkerDump["log"],
): void {
  const at = `workers[${JSON.stringify(address)}]`;
  let last: number | null = null;
  for (let i = 0; i < events.length; i++) {
    const t = events[i].handled;
    if (t === null) continue;
    if (last !== null && t < last) {
      throw new ReplayInputError(
        file,
        `${at}.stimulus_log[${i}].handled: ${t} is earlier than the event before it (${last}): the stimulus log is out of time order`,
      );
    }
    last = t;
  }
  for (let i = 1; i < log.length; i++) {
    // checkLogRecords made sure that each record ends with a finite time.
    const t = log[i][log[i].length - 1] as number;
    const before = log[i - 1][log[i - 1].length - 1] as number;
    if (t < before) {
      throw new ReplayInputError(
        file,
        `${at}.log[${i}]: its time ${t} is earlier than the record before it (${before}): the log is out of time order`,
      );
    }
  }
}

/** The state of one worker's replay (see {@link replayWorker}). */
class WorkerReplayer {
  readonly #w: WorkerDump;
  readonly #events: readonly StateMachineEvent[];
  readonly #options: ReplayWorkerOptions;
  readonly #expected: ExpectedLog;
  readonly #groups: readonly EventGroup[];
  readonly #clock = new ReplayClock();
  readonly #follower: LogFollower | undefined;
  readonly #ws: WorkerState;
  readonly #taint = new Taint();
  readonly #checker = new LogChecker();
  readonly #notes: string[] = [];
  #replayed = 0;
  #skipped = 0;
  #findMissing = 0;
  #unexplained = 0;
  #failure: ReplayFailure | null = null;
  /** Every task the replay has logged a record of. */
  readonly #seen = new Set<string>();
  /** An event showed that the stimulus log does not reach back to the worker's start. */
  #historyGap = false;
  #coverage: LogCoverage | null = null;

  constructor(w: WorkerDump, events: readonly StateMachineEvent[], options: ReplayWorkerOptions) {
    this.#w = w;
    this.#events = events;
    this.#options = options;
    this.#expected = new ExpectedLog(w.log);
    this.#groups = eventGroups(w.stimulusLog);
    this.#follower = options.followLog ? new LogFollower() : undefined;
    this.#ws = new WorkerState({
      ...workerStateOptions(w.stateParameters),
      clock: this.#clock.now,
      chooser: this.#follower,
    });
    applyThrottleThreshold(this.#ws, w.stateParameters);
    this.#follower?.attach(this.#ws);
  }

  run(): WorkerReplay {
    const w = this.#w;
    const coverage = logCoverage(w, this.#expected, this.#groups);
    this.#coverage = coverage;
    this.#notes.push(...coverage.notes);
    this.#expected.seek(coverage.recordsBefore);
    this.#taint.add(this.#ws, coverage.keysBefore);

    // Stimulus ids of the groups not replayed yet, to tell a group without records
    // from records of a stimulus the stimulus log does not hold.
    const pending = new Map<string, number>();
    for (const g of this.#groups) pending.set(g.stimulusId, (pending.get(g.stimulusId) ?? 0) + 1);

    // The Worker reuses stimulus ids (a compute-task sent under the id of the
    // task-finished it answers): two groups of one id, with only groups logging
    // nothing between them, have their records side by side in the log. The
    // later group's handling time is where the earlier one's records end.
    const laterSameId = new Array<number | null>(this.#groups.length).fill(null);
    const nextOf = new Map<string, number>();
    for (let gi = this.#groups.length - 1; gi >= 0; gi--) {
      const g = this.#groups[gi];
      laterSameId[gi] = nextOf.get(g.stimulusId) ?? null;
      const handled = this.#events[g.first]?.handled;
      if (typeof handled === "number") nextOf.set(g.stimulusId, handled);
    }

    for (let gi = 0; gi < this.#groups.length && this.#failure === null; gi++) {
      const g = this.#groups[gi];
      const checked = gi >= coverage.firstCheckedGroup;
      if (checked) this.#replayUnlogged(g, pending);
      const left = (pending.get(g.stimulusId) ?? 1) - 1;
      if (left === 0) pending.delete(g.stimulusId);
      else pending.set(g.stimulusId, left);
      if (this.#failure !== null) break;
      const steps: Step[] = [];
      for (let i = g.first; i < g.end; i++) steps.push({ ev: this.#events[i], index: i });
      const lastHandled = this.#events[g.end - 1]?.handled;
      const later = laterSameId[gi];
      this.#replayGroup(
        g.stimulusId,
        steps,
        checked,
        checked && gi === coverage.firstCheckedGroup && coverage.firstGroupPartial,
        // Only a later time bounds: at one instant the records cannot be told apart.
        later !== null && typeof lastHandled === "number" && later > lastHandled ? later : null,
      );
    }
    // Records after the last event's (a find-missing that came last, or records of
    // stimuli the stimulus log does not hold) are handled as those before an event,
    // instead of going unnoticed.
    if (this.#failure === null && coverage.firstCheckedGroup < this.#groups.length) {
      this.#replayUnlogged(null, pending);
    }

    const stimulusLogFromStart =
      coverage.recordsBefore === 0 &&
      !this.#historyGap &&
      !(coverage.stimulusLogFull && coverage.logCapped);
    const ws = this.#ws;
    const taint = this.#taint;
    // Without the worker's start, a task the replay never knew lived before the stimulus log.
    const seen = this.#seen;
    const comparable = (key: string): boolean =>
      !taint.has(key) && (stimulusLogFromStart || seen.has(key) || ws.tasks.has(key));
    // After a failure the machine stopped mid-way: its tasks say nothing about the dump's.
    const tasks =
      this.#failure === null
        ? compareTasks(w.tasks, ws.tasks, comparable, !stimulusLogFromStart)
        : { compared: 0, notComparable: 0, generationOffset: 0, mismatches: [] };
    const counterEqual = ws.transitionCounter === w.transitionCounter;
    const checker = this.#checker;
    // Without the worker's start the counter says nothing; with no record checked and
    // no task compared either, "exact" would be claimed of nothing at all.
    const comparedNothing =
      !stimulusLogFromStart && checker.checkedRecords === 0 && tasks.compared === 0;
    const verdict: WorkerVerdict =
      this.#failure !== null
        ? "failed"
        : (stimulusLogFromStart && !counterEqual) || tasks.mismatches.length > 0
          ? "diverged"
          : checker.firstDivergence !== null
            ? "converged"
            : comparedNothing
              ? "uncompared"
              : "exact";
    const report: WorkerReplayReport = {
      address: w.address,
      followLog: this.#follower !== undefined,
      events: {
        inLog: w.stimulusLog.length,
        replayed: this.#replayed,
        skipped: this.#skipped,
        findMissing: this.#findMissing,
      },
      coverage: {
        stimulusLogFromStart,
        logFromStart: !coverage.logCapped,
        notes: this.#notes,
      },
      transitionCounter: {
        replayed: ws.transitionCounter,
        dumped: w.transitionCounter,
        comparable: stimulusLogFromStart,
        equal: counterEqual,
      },
      log: {
        checkedStimuli: checker.checkedStimuli,
        checkedRecords: checker.checkedRecords,
        equal: checker.equal,
        reordered: checker.reordered,
        divergent: checker.divergent,
        firstReordering: checker.firstReordering,
        firstDivergence: checker.firstDivergence,
        unverifiable: checker.unverifiable,
        firstUnverifiable: checker.firstUnverifiable,
        unexplainedRecords: this.#unexplained,
        steered:
          this.#follower === undefined
            ? null
            : {
                recommendations: this.#follower.steeredRecommendations,
                gathers: this.#follower.pinnedGathers,
              },
      },
      failure: this.#failure,
      tasks: {
        dumped: w.tasks.size,
        replayed: ws.tasks.size,
        compared: tasks.compared,
        notComparable: tasks.notComparable,
        generationOffset: tasks.generationOffset,
        mismatches: tasks.mismatches,
      },
      verdict,
      // With --follow-log, set order no longer explains a divergence: what is left
      // is a real difference between the port and the live worker (or the log).
      ok: verdict === "exact" || (verdict === "converged" && this.#follower === undefined),
    };
    return { report, state: ws };
  }

  /**
   * Before group `g` (null: after the last event): the dumped records at the cursor
   * that belong to no stimulus of the stimulus log. A `find-missing-…` stimulus is
   * replayed (Dask does not log FindMissingEvents); any other is skipped and counted
   * as unexplained.
   */
  #replayUnlogged(g: EventGroup | null, pending: ReadonlyMap<string, number>): void {
    const index = g?.first ?? this.#events.length;
    for (;;) {
      const sid = this.#expected.peekStimulus();
      if (sid === null || sid === g?.stimulusId || pending.has(sid)) return;
      if (sid.startsWith("find-missing-")) {
        this.#findMissing++;
        const ev = new FindMissingEvent({ stimulusId: sid });
        this.#replayGroup(sid, [{ ev, index }], true, false);
        if (this.#failure !== null) return;
        continue;
      }
      const records = this.#expected.take(sid);
      if (this.#unexplained === 0) {
        const where = g === null ? "after the last event" : `before event ${index}`;
        this.#notes.push(
          `the log holds records of stimuli the stimulus log does not (first: ${sid} ${where}): they are skipped`,
        );
      }
      this.#unexplained += records.length;
    }
  }

  /**
   * The logs are shown to reach back to the worker's start: the log holds every
   * transition the counter counts, none of them before the stimulus log's first
   * event. An event about something the machine never heard of then cannot come
   * from a lost past: it is replayed as it is (the machine raises, as the seed
   * would), not skipped, which left a worker "exact" having compared almost nothing.
   */
  #startShown(): boolean {
    const c = this.#coverage;
    return c !== null && !c.logCapped && c.recordsBefore === 0;
  }

  /** The stimulus log may not reach back to the worker's start. */
  #headless(): boolean {
    const c = this.#coverage;
    if (c === null) return false;
    return c.recordsBefore > 0 || c.stimulusLogFull || this.#historyGap;
  }

  /**
   * Taints the tasks that the dumped records of a stimulus show with a history the
   * replay does not have: named there but never known to the replay, or found by
   * `compute-task`/`ensure-task-exists` in another state than `released` before the
   * replay ever knew them.
   */
  #taintPreviousHistory(expected: readonly ComparableRecord[]): void {
    const ws = this.#ws;
    const older: string[] = [];
    for (const r of expected) {
      for (const k of r.keys) {
        if (this.#seen.has(k) || this.#taint.has(k)) continue;
        if (!ws.tasks.has(k) || (r.createdIn !== null && r.createdIn !== "released")) older.push(k);
      }
    }
    if (older.length > 0) this.#taint.add(ws, older);
  }

  /** Replays the events of one stimulus and checks their records (when `checked`). */
  #replayGroup(
    sid: string,
    steps: readonly Step[],
    checked: boolean,
    partial: boolean,
    before: number | null = null,
  ): void {
    const ws = this.#ws;
    const expected = checked ? this.#expected.take(sid, before) : [];
    this.#follower?.begin(checked && !partial ? expected : []);
    const since = this.#clock.last;
    const starts: { time: number; step: Step }[] = [];
    let skippedHere = false;
    for (const step of steps) {
      if (this.#checker.firstDivergence === null && !this.#startShown()) {
        const unknown = unknownReference(
          ws,
          step.ev,
          (k) => this.#taint.has(k),
          this.#headless(),
          (k) => this.#seen.has(k),
        );
        if (unknown !== null) {
          if (!this.#historyGap) {
            this.#notes.push(
              `event ${step.index} refers to what came before the stimulus log (${unknown.reason}): the stimulus log does not reach back to the worker's start`,
            );
          }
          this.#historyGap = true;
          this.#taint.add(ws, unknown.keys);
          if (!unknown.harmless) {
            this.#skipped++;
            skippedHere = true;
            continue;
          }
        }
      }
      this.#clock.setEventTime(step.ev.handled);
      starts.push({ time: this.#clock.last, step });
      try {
        ws.handleStimulus(step.ev);
      } catch (err) {
        this.#failure = replayFailure(ws, step.ev, step.index, err);
        return;
      }
      this.#replayed++;
      this.#options.onEvent?.();
    }
    let replayed: ComparableRecord[] = recordsSince(ws, since).map(comparableRecord);
    if (skippedHere)
      this.#taint.add(
        ws,
        expected.flatMap((r) => r.keys),
      );
    if (this.#headless()) this.#taintPreviousHistory(expected);
    for (const r of replayed) for (const k of r.keys) this.#seen.add(k);
    if (this.#taint.size > 0)
      this.#taint.spread(
        ws,
        replayed.flatMap((r) => r.keys),
      );
    if (!checked) return;
    let wanted = expected;
    if (this.#taint.size > 0) {
      const taint = this.#taint;
      wanted = expected.filter((r) => !taint.any(r.keys));
      replayed = replayed.filter((r) => !taint.any(r.keys));
    }
    // The log starts inside this stimulus's records: compare the tail only.
    if (partial) replayed = replayed.slice(Math.max(0, replayed.length - wanted.length));
    const records = replayed;
    const fallback = steps[steps.length - 1];
    const headless = this.#headless();
    const difference = this.#checker.check({
      stimulusId: sid,
      expected: wanted,
      replayed,
      headless,
      eventAt: (i) => {
        const time = records[i]?.time ?? Number.POSITIVE_INFINITY;
        let step = starts[0]?.step ?? fallback;
        for (const s of starts) if (s.time < time) step = s.step;
        return { index: step.index, cls: step.ev.cls };
      },
    });
    // Without the worker's start, differing records make their tasks not comparable.
    if (difference !== null && headless) {
      this.#taint.add(
        ws,
        [...wanted, ...replayed].flatMap((r) => r.keys),
      );
    }
  }
}
