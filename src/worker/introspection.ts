/**
 * The rpcs that look into a worker rather than drive it: the records it
 * logged (`get_logs`), its state in a cluster dump (`dump_state`), the story
 * of keys (`get_story`) and CPU profiles of its threads (`profile_start`,
 * `profile_stop`).
 *
 * Apart from the worker because none of them changes what the worker does:
 * they only read it, and each checks its own arguments. Their answers grow
 * with the worker's history: each is sent with the limit its requester gave
 * (`serveRpc` applies it to every op), so that one too large for a client
 * fails that call alone.
 */

import type { LogRecord, LogRecords } from "../util/logRecords.ts";
import { logCountProblem } from "../util/logRecords.ts";
import { workerDumpDict } from "./dumpState.ts";
import { type CpuProfiler, checkProfileSettings, type WorkerProfile } from "./profiler.ts";
import { workerStory } from "./state/log.ts";
import { debugValue } from "./state/toDict.ts";
import type { WorkerState } from "./state/workerState.ts";
import type { WorkerStatus } from "./worker.ts";
import type { ResolvedWorkerOptions } from "./workerOptions.ts";

/** What the introspection rpcs read of their worker. */
export interface IntrospectionHost {
  readonly state: WorkerState;
  readonly options: ResolvedWorkerOptions;
  /** The last records the worker logged. */
  readonly logRecords: LogRecords;
  /** Profiles the worker's threads. */
  readonly profiler: CpuProfiler;
  /** Where the worker is in its life. */
  status(): WorkerStatus;
  /** Send the scheduler a message on the worker's stream. */
  tellScheduler(msg: Record<string, unknown>): void;
}

/** Answers the introspection rpcs of one worker. */
export class Introspection {
  constructor(private readonly host: IntrospectionHost) {}

  /**
   * Answers `get_logs` (a client's `getWorkerLogs`, Dask's `get_logs`): the
   * last `n` records the worker logged (all it keeps, without `n`), oldest first.
   */
  readonly getLogs = (args: Record<string, unknown>): LogRecord[] => {
    const problem = logCountProblem(args.n);
    if (problem !== null) throw new TypeError(`get_logs: ${problem}`);
    return this.host.logRecords.recent(args.n as number | undefined);
  };

  /** This worker in a cluster dump (`Client.dumpClusterState`; see dumpState.ts). */
  readonly dumpState = (): Record<string, unknown> => {
    return workerDumpDict({
      address: this.host.state.address,
      scheduler: this.host.options.scheduler,
      status: this.host.status(),
      memoryLimit: this.host.options.memoryLimit,
      logs: this.host.logRecords.recent(),
      state: this.host.state,
    });
  };

  /** The transition log records of these keys or stimulus ids (`Client.story`), oldest first. */
  readonly getStory = (args: Record<string, unknown>): unknown[] => {
    const keys = args.keys;
    if (!Array.isArray(keys) || !keys.every((k) => typeof k === "string")) {
      throw new TypeError("get_story: keys must be an array of keys");
    }
    // Not spread into story(...keys): 200,000 keys overflow the call's arguments.
    return workerStory(new Set(keys), this.host.state.log).map((entry) => debugValue(entry));
  };

  /**
   * Answers `profile_start` (`Client.profile`): profile `id` starts on every thread of
   * this worker. One a `client` started is told the scheduler (`profile-started`), and
   * its end too (`profile-ended`, {@link profileEnded}): the scheduler discards it
   * (`profile-discard`) if it removes that client first, a client killed outright.
   */
  readonly profileStart = async (args: Record<string, unknown>): Promise<"OK"> => {
    const { id, intervalUs, maxMs, client } = args;
    if (typeof id !== "string" || id === "")
      throw new TypeError("profile_start: id must be a string");
    if (client !== undefined && (typeof client !== "string" || client === "")) {
      throw new TypeError("profile_start: client must be a client's id");
    }
    const settings = checkProfileSettings("profile_start", intervalUs, maxMs);
    const status = this.host.status();
    if (status === "closing" || status === "closed") {
      throw new Error(`the worker ${this.host.state.address} is ${status}`);
    }
    await this.host.profiler.start(id, settings, client ?? null);
    if (client !== undefined) this.host.tellScheduler({ op: "profile-started", id, client });
    return "OK";
  };

  /**
   * The stream to the scheduler started: the profile a client started here before,
   * if still kept, is told now. The scheduler lists a worker, and a client may
   * profile it, from its registration, while the worker still takes its register
   * reply (its plugins' setups, its uploads): a `profile-started` then found no
   * stream and was dropped, and the profile outlived its client, refusing every
   * other until its `maxMs`. Told twice (the start ending as the stream starts),
   * the scheduler records it once.
   */
  readonly streamStarted = (): void => {
    const { current: id, currentOwner: client } = this.host.profiler;
    if (id !== null && client !== null)
      this.host.tellScheduler({ op: "profile-started", id, client });
  };

  /** The profiler's: profile `id`, which client `owner` started, is no longer kept here. */
  readonly profileEnded = (id: string, owner: string | null): void => {
    if (owner !== null) this.host.tellScheduler({ op: "profile-ended", id });
  };

  /** Answers `profile_stop`: the profiles of profile `id`. */
  readonly profileStop = (args: Record<string, unknown>): Promise<WorkerProfile> => {
    if (typeof args.id !== "string") throw new TypeError("profile_stop: id must be a string");
    return this.host.profiler.stop(args.id);
  };
}
