/**
 * CPU profiles of a worker's threads, on demand (`Client.profile`, `weft
 * profile`; Dask samples its workers' threads all the time, which V8's profiler
 * costs too much for). V8's own sampling profiler is driven through the
 * inspector from the worker's main thread, the pool threads through
 * `threadInspector.ts`.
 */

import type { Profiler } from "node:inspector";
import { Session } from "node:inspector/promises";
import { hostname } from "node:os";
import { showValue } from "../util/showValue.ts";
import { wallSeconds } from "../util/wallClock.ts";
import {
  isOriginalPositions,
  originalPositions,
  originalPositionsExpression,
  type ScriptPosition,
} from "./originalPositions.ts";
import { framePositions, withOriginalPositions } from "./sourceMappedProfile.ts";
import { type ThreadInspector, threadInspector } from "./threadInspector.ts";

/** A V8 CPU profile, as Chrome DevTools saves it (`.cpuprofile`). */
export type CpuProfile = Profiler.Profile;

/** One thread's profile. */
export interface ThreadProfile {
  /** `"main"`, or `"thread <threadId>"` for a pool thread. */
  readonly thread: string;
  /** The thread's `worker_threads.threadId` (0: the main thread). */
  readonly threadId: number;
  /** The thread's CPU profile. */
  readonly profile: CpuProfile;
}

/** What a worker answers `profile_stop` with. */
export interface WorkerProfile {
  /** The worker's process ID. */
  readonly pid: number;
  /** The worker's host name. */
  readonly host: string;
  /**
   * Wall-clock microseconds (as `Date.now() * 1000`) minus the clock of the
   * profiles' timestamps (the monotonic clock of `process.hrtime`), so that
   * profiles of several processes line up.
   */
  readonly clockOffsetUs: number;
  /** Each thread profiled: the main thread first, then the pool threads. */
  readonly threads: readonly ThreadProfile[];
  /** Pool threads that ended while profiled: their samples are lost. */
  readonly lostThreads: number;
  /** Whether the profile stopped by itself, at `maxMs`, before it was asked to. */
  readonly timedOut: boolean;
}

/** A profile's sampling interval and time limit. */
export interface ProfileSettings {
  /** Microseconds between samples. */
  readonly intervalUs: number;
  /** Stop by itself after this long, in case nobody asks (a client that left). */
  readonly maxMs: number;
}

/** Bounds of `intervalUs`: V8 samples no faster than about every 100 µs. */
const MIN_INTERVAL_US = 100;
const MAX_INTERVAL_US = 1_000_000;
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * `intervalUs` (default 1,000) and `maxMs` (default 600,000) checked: a
 * RangeError naming `what` and the setting otherwise.
 */
export function checkProfileSettings(
  what: string,
  intervalUs: unknown,
  maxMs: unknown,
): ProfileSettings {
  const interval = intervalUs ?? 1000;
  if (
    typeof interval !== "number" ||
    !Number.isInteger(interval) ||
    interval < MIN_INTERVAL_US ||
    interval > MAX_INTERVAL_US
  ) {
    throw new RangeError(
      `${what}: intervalUs must be an integer from ${MIN_INTERVAL_US} to ${MAX_INTERVAL_US}, got ${showValue(intervalUs)}`,
    );
  }
  const max = maxMs ?? 600_000;
  if (typeof max !== "number" || !Number.isInteger(max) || max < 1 || max > MAX_TIMER_MS) {
    throw new RangeError(
      `${what}: maxMs must be an integer of milliseconds from 1 to ${MAX_TIMER_MS}, got ${showValue(maxMs)}`,
    );
  }
  return { intervalUs: interval, maxMs: max };
}

/** How long a profile stopped at its `maxMs` waits to be fetched. */
const KEEP_MS = 60_000;
/** How long a thread has to answer the inspector. */
const THREAD_ANSWER_MS = 10_000;
/**
 * How long `start` waits for the pool threads' profilers. A thread busy when
 * the process's first profile attaches to it starts once its task ends.
 */
const START_WAIT_MS = 1_000;

/**
 * `p`, or nothing once {@link START_WAIT_MS} passed. The timer is ref'd: an
 * inspector answer on its way holds no handle of the event loop.
 */
async function withinStartWait(p: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise((r) => (timer = setTimeout(r, START_WAIT_MS)))]);
  clearTimeout(timer);
}

/** A profile under way or kept: one at a time per worker. */
interface Run {
  readonly id: string;
  /** The client that started it, if it said so: discarded with it (see {@link CpuProfiler.discard}). */
  readonly owner: string | null;
  /** The main thread's session. */
  readonly session: Session;
  /** The pool threads asked to start, and whether they did. */
  readonly started: Map<number, Promise<boolean>>;
  readonly stopAttaching: () => void;
  timer: NodeJS.Timeout | null;
  /** Set once stopped. */
  result: Promise<WorkerProfile> | null;
  timedOut: boolean;
}

/**
 * The profiler of one worker: the worker's main thread and the pool threads
 * `threadIds()` names (not the other threads of the process, such as another
 * in-process worker's).
 */
export class CpuProfiler {
  private run: Run | null = null;
  /** Set by {@link close}: no profile starts any more. */
  private closed = false;

  constructor(
    private readonly threadIds: () => readonly number[],
    private readonly inspector: ThreadInspector = threadInspector(),
    /** Told of each profile that started and is no longer kept: fetched, expired or discarded. */
    private readonly ended: (id: string, owner: string | null) => void = () => {},
  ) {}

  /** The id of the profile under way or waiting to be fetched, if any. */
  get current(): string | null {
    return this.run?.id ?? null;
  }

  /** The client that started the profile under way or waiting to be fetched, if any said so. */
  get currentOwner(): string | null {
    return this.run?.owner ?? null;
  }

  /**
   * Start profile `id`, for the client `owner` if given. Rejects while another one
   * is under way or waiting to be fetched.
   */
  async start(id: string, o: ProfileSettings, owner: string | null = null): Promise<void> {
    if (this.closed) throw new Error("cannot profile: closing");
    if (this.run !== null) {
      throw new Error(`a profile (${this.run.id}) is under way on this worker already`);
    }
    const session = new Session();
    const started = new Map<number, Promise<boolean>>();
    const startThread = (threadId: number): void => {
      if (started.has(threadId) || !this.threadIds().includes(threadId)) return;
      started.set(threadId, this.startThread(threadId, o.intervalUs));
    };
    const run: Run = {
      id,
      owner,
      session,
      started,
      stopAttaching: this.inspector.onAttach(startThread),
      timer: null,
      result: null,
      timedOut: false,
    };
    this.run = run;
    try {
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: o.intervalUs });
      await session.post("Profiler.start");
      // Bounded like the threads' answers below: the inspector's answer to `enable`
      // waits on the threads too. A thread attached later starts through onAttach.
      await withinStartWait(this.inspector.enable());
      for (const threadId of this.threadIds()) {
        if (this.inspector.isAttached(threadId)) startThread(threadId);
      }
      await withinStartWait(Promise.all(started.values()));
      // Closed (or discarded) meanwhile: close() dropped this run, and stopped only the
      // threads started by then.
      if (this.run !== run) {
        throw new Error(this.closed ? "closed while starting" : "discarded while starting");
      }
    } catch (err) {
      if (this.run === run) this.run = null;
      run.stopAttaching();
      session.disconnect();
      for (const threadId of started.keys()) void this.stopThread(threadId);
      // Closed meanwhile, the session's own error ("not connected") would say less.
      throw this.closed ? new Error("cannot profile: closing", { cause: err }) : err;
    }
    run.timer = setTimeout(() => {
      run.timer = null;
      run.timedOut = true;
      run.result = this.collect(run);
      // Whoever fetches it sees its error.
      run.result.catch(() => {});
      setTimeout(() => this.let(run), KEEP_MS).unref();
    }, o.maxMs);
    run.timer.unref();
  }

  /** Stop profile `id` (if it did not stop at its `maxMs`) and give its profiles. */
  async stop(id: string): Promise<WorkerProfile> {
    const run = this.run;
    if (run === null || run.id !== id) {
      throw new Error(
        `no profile ${JSON.stringify(id)} on this worker` +
          " (it ran past its maxMs and was not fetched in time, or was never started here)",
      );
    }
    if (run.timer !== null) {
      clearTimeout(run.timer);
      run.timer = null;
    }
    run.result ??= this.collect(run);
    try {
      return await run.result;
    } finally {
      this.let(run);
    }
  }

  /**
   * Drop profile `id` if it is under way or kept, its profiles lost: the client
   * that started it is gone for good (the scheduler removed it), and would
   * otherwise leave it running until its `maxMs` (an hour for `weft run
   * --profile`), every other profile refused meanwhile.
   */
  discard(id: string): void {
    if (this.run?.id === id) this.drop();
  }

  /** Drop the profile client `owner` started, if one is under way or kept (see {@link discard}). */
  discardOwnedBy(owner: string): void {
    if (this.run !== null && this.run.owner === owner) this.drop();
  }

  /** Drop any profile, and start none any more (the worker closes). */
  close(): void {
    this.closed = true;
    this.drop();
  }

  /** `run` is no longer kept, if it still was. */
  private let(run: Run): void {
    if (this.run !== run) return;
    this.run = null;
    this.ended(run.id, run.owner);
  }

  /** Drop the run under way or kept, if any: its profilers stopped, its profiles lost. */
  private drop(): void {
    const run = this.run;
    if (run === null) return;
    this.let(run);
    if (run.timer !== null) clearTimeout(run.timer);
    if (run.result !== null) return;
    run.stopAttaching();
    // Disconnecting ends the main thread's profiler; the pool threads' are stopped and dropped.
    run.session.disconnect();
    for (const threadId of run.started.keys()) void this.stopThread(threadId);
  }

  private async startThread(threadId: number, intervalUs: number): Promise<boolean> {
    try {
      const send = (method: string, params: object = {}) =>
        this.inspector.send(threadId, method, params, THREAD_ANSWER_MS);
      await send("Profiler.enable");
      await send("Profiler.setSamplingInterval", { interval: intervalUs });
      await send("Profiler.start");
      return true;
    } catch {
      return false;
    }
  }

  /** Stop thread `threadId`'s profiler: its profile, or null if it is gone. */
  private async stopThread(threadId: number): Promise<CpuProfile | null> {
    try {
      const got = (await this.inspector.send(threadId, "Profiler.stop", {}, THREAD_ANSWER_MS)) as {
        profile: CpuProfile;
      };
      await this.inspector.send(threadId, "Profiler.disable", {}, THREAD_ANSWER_MS);
      return got.profile;
    } catch {
      return null;
    }
  }

  /**
   * `profile` of thread `threadId` (0: this one) with its call frames where
   * that thread's source maps put them (see `originalPositions.ts`); as it is
   * if the thread cannot say (it ended meanwhile).
   */
  private async mapped(threadId: number, profile: CpuProfile): Promise<CpuProfile> {
    const positions = framePositions(profile);
    if (positions.length === 0) return profile;
    const originals =
      threadId === 0
        ? originalPositions(positions)
        : await this.threadOriginalPositions(threadId, positions);
    return originals === null ? profile : withOriginalPositions(profile, positions, originals);
  }

  /** {@link originalPositions} of `positions`, as pool thread `threadId` knows them; null if it cannot say. */
  private async threadOriginalPositions(
    threadId: number,
    positions: readonly ScriptPosition[],
  ): Promise<(ScriptPosition | null)[] | null> {
    try {
      const got = (await this.inspector.send(
        threadId,
        "Runtime.evaluate",
        { expression: originalPositionsExpression(positions), returnByValue: true },
        THREAD_ANSWER_MS,
      )) as { result?: { value?: unknown }; exceptionDetails?: unknown };
      const value = got.exceptionDetails === undefined ? got.result?.value : undefined;
      return isOriginalPositions(value, positions.length) ? value : null;
    } catch {
      return null;
    }
  }

  /** Stop every profiler of `run` and gather the profiles; ends the run's session. */
  private async collect(run: Run): Promise<WorkerProfile> {
    run.stopAttaching();
    try {
      const threads: ThreadProfile[] = [];
      const main = (await run.session.post("Profiler.stop")) as { profile: CpuProfile };
      threads.push({ thread: "main", threadId: 0, profile: await this.mapped(0, main.profile) });
      let lost = 0;
      const pool = await Promise.all(
        [...run.started].map(async ([threadId, started]): Promise<ThreadProfile | null> => {
          const profile = (await started) ? await this.stopThread(threadId) : null;
          if (profile === null) {
            // It ended meanwhile (an idle pool thread retires), or never started.
            lost++;
            return null;
          }
          return {
            thread: `thread ${threadId}`,
            threadId,
            profile: await this.mapped(threadId, profile),
          };
        }),
      );
      for (const t of pool) if (t !== null) threads.push(t);
      threads.sort((x, y) => x.threadId - y.threadId);
      const monotonicUs = Number(process.hrtime.bigint() / 1000n);
      const wallUs = wallSeconds() * 1e6;
      return {
        pid: process.pid,
        host: hostname(),
        clockOffsetUs: Math.round(wallUs - monotonicUs),
        threads,
        lostThreads: lost,
        timedOut: run.timedOut,
      };
    } finally {
      run.session.disconnect();
    }
  }
}
