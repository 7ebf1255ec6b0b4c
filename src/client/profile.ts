/**
 * `Client.profile`: CPU profiles of the workers' threads while some code runs
 * (Dask's `Client.profile`, on demand rather than always on), merged into one
 * `.cpuprofile` that Chrome DevTools, VS Code and speedscope open, and a
 * summary of where the time went, by function.
 */

import { randomUUID } from "node:crypto";
import { withReplyLimit } from "../comm/replyLimit.ts";
import { asError } from "../util/asError.ts";
import { checkKnownOptions } from "../util/knownOptions.ts";
import { showValue } from "../util/showValue.ts";
import { writeWholeFile } from "../util/wholeFile.ts";
import type { PeerPool } from "../worker/peerPool.ts";
import {
  type CpuProfile,
  checkProfileSettings,
  type ProfileSettings,
  type ThreadProfile,
  type WorkerProfile,
} from "../worker/profiler.ts";
import { callEachWorker } from "./askWorkers.ts";
import { PROFILE_OPTIONS } from "./optionNames.ts";
import { checkWritablePath, writing } from "./writablePath.ts";

/** Options of `Client.profile`. */
export interface ProfileOptions {
  /** Only these workers (addresses, hosts for every worker there, or names). Default (or null): every worker. */
  readonly workers?: string | readonly string[] | null;
  /** Microseconds between samples, from 100 to 1,000,000. Default 1,000. */
  readonly intervalUs?: number;
  /**
   * The workers stop profiling by themselves this long after starting, in
   * ms (in case this client goes away), and keep the profile a minute longer
   * for it. Default 600,000 (10 minutes).
   */
  readonly maxMs?: number;
  /**
   * Also write the merged profile to this file (a `.cpuprofile`), even if the code
   * throws (whose error then wins over a failure of the write). A path that cannot
   * be written is refused before the code runs.
   */
  readonly path?: string | URL | null;
  /** Also profile the scheduler's thread (listed as worker `"scheduler"`). Default false. */
  readonly scheduler?: boolean;
}

/** How the scheduler's profile is asked for: its requests `profile-start` and `profile-stop`. */
export type SchedulerRequest = (
  op: "profile-start" | "profile-stop",
  args: Record<string, unknown>,
) => Promise<unknown>;

/** One thread's part of a {@link ClusterProfile}. */
export interface ProfiledThread {
  /** The worker's address. */
  readonly worker: string;
  /** `"main"` (the worker's event loop, and in-process tasks) or `"thread <id>"` (a pool thread). */
  readonly thread: string;
  /** Milliseconds sampled, and how many of them idle (V8's `(idle)`, or a pool thread waiting for a task). */
  readonly sampledMs: number;
  /** Of `sampledMs`, the milliseconds spent idle. */
  readonly idleMs: number;
}

/** A worker whose profile could not be fetched, and why. */
export interface FailedWorker {
  /** The worker's address. */
  readonly worker: string;
  /** Why its profile could not be fetched. */
  readonly reason: string;
}

/** Where the sampled time went: one function. */
export interface FunctionTime {
  /** The function's name, `(anonymous)`, or V8's `(program)`, `(garbage collector)`. */
  readonly functionName: string;
  /** Its script (a file URL, a module specifier), or "" for V8's own entries. */
  readonly url: string;
  /** 1-based, or 0 when unknown. */
  readonly line: number;
  /** Milliseconds sampled in the function itself (not in what it called). */
  readonly selfMs: number;
}

/** What `Client.profile` resolves with. */
export interface ClusterProfile<T> {
  /** What the code gave. */
  readonly value: T;
  /**
   * The threads' profiles merged into one: under the root, one node per
   * thread (`<worker> <thread>`), the threads one after the other in time.
   */
  readonly profile: CpuProfile;
  /** Each thread profiled, with the time sampled on it. */
  readonly threads: readonly ProfiledThread[];
  /** Pool threads that ended while profiled (their samples are lost). */
  readonly lostThreads: number;
  /** Workers whose profile could not be fetched (lost meanwhile, say): left out. */
  readonly failedWorkers: readonly FailedWorker[];
  /** The functions taking the most time, idle time left out, most first (the first 50). */
  readonly top: readonly FunctionTime[];
}

/** Checked options: a TypeError or RangeError naming the option otherwise. */
export function profileSettings(options: unknown): ProfileSettings {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`profile: options must be an object, got ${showValue(options)}`);
  }
  checkKnownOptions("profile", options, PROFILE_OPTIONS);
  const o = options as ProfileOptions;
  if (o.scheduler !== undefined && typeof o.scheduler !== "boolean") {
    throw new TypeError(`profile: scheduler must be a boolean, got ${showValue(o.scheduler)}`);
  }
  // null, as Dask's filename=None: no file.
  if (o.path != null && typeof o.path !== "string" && !(o.path instanceof URL)) {
    throw new TypeError(
      `profile: path must be a file path or a file: URL, got ${showValue(o.path)}`,
    );
  }
  return checkProfileSettings("profile", o.intervalUs, o.maxMs);
}

/** Whether `v` looks like what a worker answers `profile_stop` with. */
function isWorkerProfile(v: unknown): v is WorkerProfile {
  if (typeof v !== "object" || v === null) return false;
  const w = v as Partial<WorkerProfile>;
  return (
    typeof w.pid === "number" &&
    typeof w.host === "string" &&
    typeof w.lostThreads === "number" &&
    Array.isArray(w.threads) &&
    w.threads.every(
      (t: Partial<ThreadProfile>) =>
        typeof t === "object" &&
        t !== null &&
        typeof t.thread === "string" &&
        typeof t.threadId === "number" &&
        isCpuProfile(t.profile),
    )
  );
}

function isCpuProfile(p: unknown): p is CpuProfile {
  if (typeof p !== "object" || p === null) return false;
  const c = p as Partial<CpuProfile>;
  return (
    Array.isArray(c.nodes) &&
    c.nodes.every(
      (n) =>
        typeof n === "object" &&
        n !== null &&
        typeof n.id === "number" &&
        typeof n.callFrame === "object" &&
        n.callFrame !== null,
    ) &&
    typeof c.startTime === "number" &&
    typeof c.endTime === "number" &&
    (c.samples === undefined || Array.isArray(c.samples)) &&
    (c.timeDeltas === undefined || Array.isArray(c.timeDeltas)) &&
    (c.samples?.length ?? 0) === (c.timeDeltas?.length ?? 0)
  );
}

/** Each sample's duration in µs: the time to the next sample (the last one: the profile's end). */
function sampleDurations(p: CpuProfile): number[] {
  const deltas = p.timeDeltas ?? [];
  const out = new Array<number>(deltas.length);
  let t = p.startTime;
  const times = deltas.map((d) => (t += d));
  for (let i = 0; i < times.length; i++) {
    const next = i + 1 < times.length ? times[i + 1] : Math.max(p.endTime, times[i]);
    out[i] = Math.max(next - times[i], 0);
  }
  return out;
}

/** Self time (µs) of each node of `p`. */
function selfTimes(p: CpuProfile): Map<number, number> {
  const out = new Map<number, number>();
  const samples = p.samples ?? [];
  const durations = sampleDurations(p);
  for (let i = 0; i < samples.length; i++) {
    out.set(samples[i], (out.get(samples[i]) ?? 0) + durations[i]);
  }
  return out;
}

/** The node of `p` no other node names as a child. */
function rootOf(p: CpuProfile): CpuProfile["nodes"][number] {
  const children = new Set<number>();
  for (const n of p.nodes) for (const c of n.children ?? []) children.add(c);
  const root = p.nodes.find((n) => !children.has(n.id));
  if (root === undefined) throw new Error("profile: a profile without a root node");
  return root;
}

/**
 * Profiles of several threads as one: under a new root, a node per thread
 * named by `label`, each thread's samples after the previous thread's, so
 * that every sample keeps its duration and the times add up across threads.
 */
export function mergeProfiles(
  parts: readonly { readonly label: string; readonly profile: CpuProfile }[],
): CpuProfile {
  const frame = (functionName: string) => ({
    functionName,
    scriptId: "0",
    url: "",
    lineNumber: -1,
    columnNumber: -1,
  });
  const root = { id: 1, callFrame: frame("(root)"), hitCount: 0, children: [] as number[] };
  const nodes: CpuProfile["nodes"] = [root];
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  let nextId = 2;
  // The merged timeline: each sample starts when the one before it (of any thread) ended.
  let clock = 0;
  let lastSampleAt = 0;
  for (const { label, profile } of parts) {
    const partRoot = rootOf(profile);
    const ids = new Map<number, number>();
    const threadNode = {
      id: nextId++,
      callFrame: frame(label),
      hitCount: partRoot.hitCount ?? 0,
      children: [] as number[],
    };
    ids.set(partRoot.id, threadNode.id);
    for (const n of profile.nodes) if (n !== partRoot) ids.set(n.id, nextId++);
    const idOf = (id: number): number => {
      const mapped = ids.get(id);
      if (mapped === undefined) throw new Error(`profile: node ${id} is named but not listed`);
      return mapped;
    };
    threadNode.children = (partRoot.children ?? []).map(idOf);
    root.children.push(threadNode.id);
    nodes.push(threadNode);
    for (const n of profile.nodes) {
      if (n === partRoot) continue;
      nodes.push({ ...n, id: idOf(n.id), children: (n.children ?? []).map(idOf) });
    }
    const own = profile.samples ?? [];
    const durations = sampleDurations(profile);
    for (let i = 0; i < own.length; i++) {
      samples.push(idOf(own[i]));
      timeDeltas.push(clock - lastSampleAt);
      lastSampleAt = clock;
      clock += durations[i];
    }
  }
  return { nodes, startTime: 0, endTime: clock, samples, timeDeltas };
}

/**
 * Whether a sample in `f` is a thread waiting for work: V8's `(idle)` (an
 * event loop with nothing to do, as an idle pool thread's is), or piscina's
 * loop blocked in `Atomics.wait` for the next task, which V8 samples as running
 * JavaScript: the pool threads of workers before 2026-12-07 waited so.
 */
function isIdle(f: CpuProfile["nodes"][number]["callFrame"]): boolean {
  return (
    f.functionName === "(idle)" ||
    (f.functionName === "atomicsWaitLoop" && f.url.includes("/piscina/"))
  );
}

/** Milliseconds the `threads` were busy (sampled, not idle), together. */
export function busyMs(threads: readonly ProfiledThread[]): number {
  let busy = 0;
  for (const t of threads) busy += t.sampledMs - t.idleMs;
  return busy;
}

/** Milliseconds, to a tenth. */
function ms(us: number): number {
  return Math.round(us / 100) / 10;
}

/** The sampled and idle milliseconds of a thread's profile. */
export function threadTimes(p: CpuProfile): { sampledMs: number; idleMs: number } {
  const self = selfTimes(p);
  let sampled = 0;
  let idle = 0;
  for (const n of p.nodes) {
    const t = self.get(n.id) ?? 0;
    sampled += t;
    if (isIdle(n.callFrame)) idle += t;
  }
  return { sampledMs: ms(sampled), idleMs: ms(idle) };
}

/** The `n` functions of `p` with the most self time, idle time left out. */
export function topFunctions(p: CpuProfile, n: number): FunctionTime[] {
  const self = selfTimes(p);
  const byFunction = new Map<
    string,
    { functionName: string; url: string; line: number; us: number }
  >();
  for (const node of p.nodes) {
    const t = self.get(node.id);
    if (t === undefined || t === 0) continue;
    const f = node.callFrame;
    if (isIdle(f)) continue;
    const functionName = f.functionName === "" ? "(anonymous)" : f.functionName;
    const line = f.lineNumber >= 0 ? f.lineNumber + 1 : 0;
    const key = `${functionName}\0${f.url}\0${line}`;
    const entry = byFunction.get(key);
    if (entry === undefined) byFunction.set(key, { functionName, url: f.url, line, us: t });
    else entry.us += t;
  }
  return [...byFunction.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, n)
    .map((e) => ({ functionName: e.functionName, url: e.url, line: e.line, selfMs: ms(e.us) }));
}

/** How a body's run ended. */
type Outcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: unknown };

/**
 * Profile the threads of the workers `workersOf()` names (asked once the options
 * are checked) while `body` runs, then merge their profiles (see `Client.profile`).
 * `who`: the client's id, named where a worker refuses a profile larger than
 * the client's connection takes (that worker's profile is then lost), and told
 * the workers, so that the scheduler discards the profile should it remove this
 * client before it is stopped (a client killed outright).
 */
export async function profileWhile<T>(
  peers: PeerPool,
  who: string,
  workersOf: () => Promise<{ addresses: readonly string[]; unmatched: readonly string[] }>,
  body: () => T | Promise<T>,
  options: ProfileOptions,
  scheduler: SchedulerRequest,
): Promise<ClusterProfile<T>> {
  if (typeof body !== "function") {
    throw new TypeError(
      `profile: expected the code to profile, as a function, got ${showValue(body)}`,
    );
  }
  const { intervalUs, maxMs } = profileSettings(options);
  // Before the code runs: a profile that could not be written after it would take its value along.
  if (options.path != null) await checkWritablePath("profile", options.path);
  // In address order, as the other requests to every worker report.
  const chosen = await workersOf();
  const addresses = [...chosen.addresses].sort();
  const withScheduler = options.scheduler === true;
  if (addresses.length === 0 && !withScheduler) {
    throw new Error(
      `profile: no worker to profile (${options.workers == null ? "none is connected" : "none matches workers"})`,
    );
  }
  const id = randomUUID();
  const started: string[] = [];
  if (withScheduler) await scheduler("profile-start", { id, intervalUs, maxMs });
  try {
    await callEachWorker(
      peers,
      addresses,
      // `client`: the scheduler discards the profile if it removes this client first.
      { op: "profile", method: "profile_start", args: { id, intervalUs, maxMs, client: who } },
      { noun: "profiler", expected: "something other than OK" },
      (got, address) => {
        if (got !== "OK") return null;
        started.push(address);
        return got;
      },
    );
  } catch (err) {
    // Those that did start are stopped, their profiles dropped.
    if (withScheduler) await scheduler("profile-stop", { id }).catch(() => {});
    await Promise.all(
      started.map(async (address) => {
        try {
          await (await peers.get(address)).call("profile_stop", { id });
        } catch {
          // gone, or stopped already
        }
      }),
    );
    throw err;
  }
  let outcome: Outcome<T>;
  try {
    outcome = { ok: true, value: await body() };
  } catch (error) {
    outcome = { ok: false, error };
  }
  // A worker lost meanwhile costs its own profile only; so does the scheduler,
  // whose failure must not leave the workers profiling nor hide the code's outcome.
  // A typo among the workers named is said, not passed over as if it had been profiled.
  const failed: FailedWorker[] = chosen.unmatched.map((worker) => ({
    worker,
    reason: "no connected worker matches it",
  }));
  let own: WorkerProfile | null = null;
  if (withScheduler) {
    try {
      const got = await scheduler("profile-stop", { id });
      if (isWorkerProfile(got)) own = got;
      else failed.push({ worker: "scheduler", reason: "it answered profile-stop with no profile" });
    } catch (err) {
      failed.push({
        worker: "scheduler",
        reason: asError(err).message,
      });
    }
  }
  const profiles: Record<string, WorkerProfile> = {};
  const answers = await Promise.all(
    addresses.map(async (address): Promise<WorkerProfile | string> => {
      try {
        const rpc = await peers.get(address);
        // A profile larger than this end takes is refused by the worker, for this call alone.
        const got = await rpc.call("profile_stop", withReplyLimit({ id }, who, rpc.comm));
        return isWorkerProfile(got) ? got : "it answered profile_stop with no profile";
      } catch (err) {
        return asError(err).message;
      }
    }),
  );
  addresses.forEach((address, i) => {
    const a = answers[i];
    if (typeof a === "string") failed.push({ worker: address, reason: a });
    else profiles[address] = a;
  });
  // The scheduler first: sharing a process with workers (a LocalCluster), its main thread is theirs.
  const merged = {
    ...mergeWorkerProfiles(own === null ? profiles : { scheduler: own, ...profiles }),
    failedWorkers: failed,
  };
  const path = options.path;
  if (path != null) {
    const written = writing("profile", path, () =>
      writeWholeFile(path, JSON.stringify(merged.profile)),
    );
    // The code's error wins over a file that cannot be written (a directory the code
    // removed, a full disk), as performanceReport's does: the write's took its place.
    if (outcome.ok) await written;
    else await written.catch(() => {});
  }
  if (!outcome.ok) throw outcome.error;
  return { value: outcome.value, ...merged };
}

/**
 * The workers' profiles (`{address: profile}`) as one. A process's main thread
 * is kept once, under its first worker: in-process workers share it.
 */
export function mergeWorkerProfiles(
  profiles: Readonly<Record<string, WorkerProfile>>,
): Omit<ClusterProfile<never>, "value" | "failedWorkers"> {
  const parts: { label: string; profile: CpuProfile }[] = [];
  const threads: ProfiledThread[] = [];
  const mainsSeen = new Set<string>();
  let lostThreads = 0;
  for (const [worker, w] of Object.entries(profiles)) {
    lostThreads += w.lostThreads;
    for (const t of w.threads) {
      if (t.thread === "main") {
        const process = `${w.host} ${w.pid}`;
        if (mainsSeen.has(process)) continue;
        mainsSeen.add(process);
      }
      parts.push({ label: `${worker} ${t.thread}`, profile: t.profile });
      threads.push({ worker, thread: t.thread, ...threadTimes(t.profile) });
    }
  }
  const profile = mergeProfiles(parts);
  return { profile, threads, lostThreads, top: topFunctions(profile, 50) };
}
