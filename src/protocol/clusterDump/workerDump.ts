/** One worker of the dump, typed, and the WorkerState parameters it ran with. */

import { DaskConfig } from "./daskConfig.ts";
import { type Ctx, child, type PathNode, renderPath } from "./errors.ts";
import { type DumpEvent, normalizeEvent } from "./events.ts";
import { normalizeLogEntry, type WorkerLogEntry } from "./logEntries.ts";
import { statusName } from "./serverStatus.ts";
import { keyList, keyListsByWorker } from "./taskKeys.ts";
import { type DumpTask, normalizeTask } from "./tasks.ts";
import type { DumpObject, DumpValue } from "./values.ts";
import { isDumpObject } from "./values.ts";

/**
 * What `Worker.__init__` passes to its `WorkerState`, derived from the dumped
 * worker; the field names and `null`-for-infinity convention are those of the
 * conformance vectors' `config` (`../shared/conformance/FORMAT.md`).
 */
export interface WorkerStateParameters {
  /** Threads. */
  readonly nthreads: number;
  /** The worker's address. */
  readonly address: string;
  /** Total resources (see {@link WorkerDump.resourcesSource}). */
  readonly resources: Readonly<Record<string, number>>;
  /** `distributed.worker.connections.outgoing` (sic: incoming transfers use outgoing connections). */
  readonly transfer_incoming_count_limit: number;
  /** `int(memory_limit * distributed.worker.memory.transfer)`, null (infinite) without a memory limit or with the fraction `false`. */
  readonly transfer_incoming_bytes_limit: number | null;
  /** `parse_bytes(distributed.worker.transfer.message-bytes-limit)`. */
  readonly transfer_message_bytes_limit: number | null;
  /** Constant in `WorkerState.__init__`: `int(10e6)`. */
  readonly transfer_incoming_bytes_throttle_threshold: number;
  /** `distributed.worker.validate`. */
  readonly validate: boolean;
  /** The Worker's `transition_counter_max` argument (default False); the dump does not record it. */
  readonly transition_counter_max: number | false;
}

/** One worker of the dump, typed. */
export interface WorkerDump {
  /** The worker's address (its key in `workers`). */
  readonly address: string;
  /** `Worker-…` id, or null. */
  readonly id: string | null;
  /** Threads. */
  readonly nthreads: number;
  /** The memory limit in bytes, or null (no limit). */
  readonly memoryLimit: number | null;
  /** The server status name (`"running"` from `"<Status.running: 'running'>"`), or null. */
  readonly status: string | null;
  /** `WorkerState.running`, or null when absent. */
  readonly running: boolean | null;
  /** The dumped Dask configuration. */
  readonly config: DaskConfig;
  /** Total resources: the scheduler's record of this worker when present, else `distributed.worker.resources`. */
  readonly resources: Readonly<Record<string, number>>;
  /** Where {@link resources} came from. */
  readonly resourcesSource: "scheduler" | "config";
  /** The WorkerState constructor parameters this worker ran with. */
  readonly stateParameters: WorkerStateParameters;
  /** The stimulus log, oldest first. */
  readonly stimulusLog: readonly DumpEvent[];
  /** True when the stimulus log is full (10,000 events): older events were dropped and a replay from scratch is impossible. */
  readonly stimulusLogFull: boolean;
  /** The transition log (`WorkerState.log`), oldest first, as lists. */
  readonly log: readonly WorkerLogEntry[];
  /** True when the log is full (100,000 entries). */
  readonly logFull: boolean;
  /** The worker's tasks by key, in dump order. */
  readonly tasks: ReadonlyMap<string, DumpTask>;
  /** `WorkerState.transition_counter`. */
  readonly transitionCounter: number;
  /** Keys in `data` (memory). */
  readonly dataKeys: readonly string[];
  /** `ready` keys in pop order. */
  readonly ready: readonly string[];
  /** `constrained` keys in pop order. */
  readonly constrained: readonly string[];
  /** Keys executing. */
  readonly executing: readonly string[];
  /** Keys long-running (seceded). */
  readonly longRunning: readonly string[];
  /** Keys in flight. */
  readonly inFlightTasks: readonly string[];
  /** Keys whose fetch found no replica. */
  readonly missingDepFlight: readonly string[];
  /** `{worker: keys}` of data this worker will fetch. */
  readonly dataNeeded: Readonly<Record<string, readonly string[]>>;
  /** `{worker: keys}` the worker believes each peer holds. */
  readonly hasWhat: Readonly<Record<string, readonly string[]>>;
  /** `{worker: keys}` being fetched. */
  readonly inFlightWorkers: Readonly<Record<string, readonly string[]>>;
  /** Peers that answered busy. */
  readonly busyWorkers: readonly string[];
  /** The whole normalized worker dict. */
  readonly raw: DumpObject;
}

function numberRecord(v: DumpValue | undefined, path: PathNode, ctx: Ctx): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(ctx.object(v, path))) out[k] = ctx.number(n, child(path, k));
  return out;
}

function optionalKeyList(obj: DumpObject, field: string, path: PathNode, ctx: Ctx): string[] {
  if (obj[field] === undefined || obj[field] === null) return [];
  const list = keyList(obj[field], child(path, field), ctx);
  obj[field] = list;
  return list;
}

function optionalKeyListsByWorker(
  obj: DumpObject,
  field: string,
  path: PathNode,
  ctx: Ctx,
): Record<string, string[]> {
  if (obj[field] === undefined || obj[field] === null) return {};
  return keyListsByWorker(obj[field], child(path, field), ctx);
}

/**
 * The `WorkerState` options a weft worker writes into its dump
 * (`state_parameters`, `src/worker/dumpState.ts`): weft's limits are options
 * of their own, which Dask's configuration cannot always express.
 */
function dumpedStateParameters(p: DumpObject, path: PathNode, ctx: Ctx): WorkerStateParameters {
  const optionalLimit = (field: string): number | null =>
    ctx.optionalNumber(p[field], child(path, field));
  const counterMax = p.transition_counter_max;
  return {
    nthreads: ctx.number(p.nthreads, child(path, "nthreads")),
    address: ctx.string(p.address, child(path, "address")),
    resources: numberRecord(p.resources, child(path, "resources"), ctx),
    transfer_incoming_count_limit: ctx.number(
      p.transfer_incoming_count_limit,
      child(path, "transfer_incoming_count_limit"),
    ),
    transfer_incoming_bytes_limit: optionalLimit("transfer_incoming_bytes_limit"),
    transfer_message_bytes_limit: optionalLimit("transfer_message_bytes_limit"),
    transfer_incoming_bytes_throttle_threshold: ctx.number(
      p.transfer_incoming_bytes_throttle_threshold,
      child(path, "transfer_incoming_bytes_throttle_threshold"),
    ),
    validate: ctx.optionalBoolean(p.validate, child(path, "validate")) ?? false,
    transition_counter_max:
      counterMax === false || counterMax === null || counterMax === undefined
        ? false
        : ctx.number(counterMax, child(path, "transition_counter_max")),
  };
}

export function buildWorker(
  address: string,
  w: DumpObject,
  path: PathNode,
  schedulerWorker: DumpObject | undefined,
  ctx: Ctx,
): WorkerDump {
  const dumpedAddress = ctx.optionalString(w.address, child(path, "address"));
  if (dumpedAddress !== null && dumpedAddress !== address) {
    ctx.fail(
      child(path, "address"),
      `the worker's address ${JSON.stringify(dumpedAddress)} differs from its entry's key`,
    );
  }
  const nthreads = ctx.number(w.nthreads, child(path, "nthreads"));
  const memoryLimit = ctx.optionalNumber(w.memory_limit, child(path, "memory_limit"));
  const configPath = child(path, "config");
  const config = new DaskConfig(ctx.object(w.config, configPath), ctx.file, renderPath(configPath));

  const slPath = child(path, "stimulus_log");
  const stimulusLog = ctx
    .list(w.stimulus_log, slPath)
    .map((e, i) => normalizeEvent(e, child(slPath, i), ctx));
  const logPath = child(path, "log");
  const log = ctx.list(w.log, logPath).map((e, i) => normalizeLogEntry(e, child(logPath, i), ctx));
  const tasksPath = child(path, "tasks");
  const tasks = new Map<string, DumpTask>();
  for (const [key, t] of Object.entries(ctx.object(w.tasks, tasksPath))) {
    tasks.set(key, normalizeTask(key, t, child(tasksPath, key), ctx));
  }
  const transitionCounter = ctx.count(w.transition_counter, child(path, "transition_counter"));

  let resources: Record<string, number>;
  let resourcesSource: "scheduler" | "config";
  // Only a record without resources falls back to the config: any other non-object
  // there is corrupt, and was replaced by the config's resources unsaid.
  const recorded = schedulerWorker?.resources;
  if (schedulerWorker && recorded !== undefined && recorded !== null) {
    const p = child(child(child(null, "scheduler"), "workers"), address);
    resources = numberRecord(schedulerWorker.resources, child(p, "resources"), ctx);
    resourcesSource = "scheduler";
  } else {
    resources = config.workerResources();
    resourcesSource = "config";
  }

  const fraction = config.memoryTransferFraction();
  const stateParameters: WorkerStateParameters = isDumpObject(w.state_parameters)
    ? dumpedStateParameters(w.state_parameters, child(path, "state_parameters"), ctx)
    : {
        nthreads,
        address,
        resources,
        transfer_incoming_count_limit: config.connectionsOutgoing(),
        transfer_incoming_bytes_limit:
          memoryLimit !== null && fraction !== false ? Math.trunc(memoryLimit * fraction) : null,
        transfer_message_bytes_limit: config.transferMessageBytesLimit(),
        transfer_incoming_bytes_throttle_threshold: 10_000_000,
        validate: config.workerValidate(),
        transition_counter_max: false,
      };

  let dataKeys: string[] = [];
  if (w.data !== undefined && w.data !== null)
    dataKeys = Object.keys(ctx.object(w.data, child(path, "data")));
  const busyPath = child(path, "busy_workers");
  const busyWorkers =
    w.busy_workers === undefined || w.busy_workers === null
      ? []
      : ctx.list(w.busy_workers, busyPath).map((b, i) => ctx.string(b, child(busyPath, i)));

  return {
    address,
    id: ctx.optionalString(w.id, child(path, "id")),
    nthreads,
    memoryLimit,
    status: statusName(w.status, child(path, "status"), ctx),
    running: ctx.optionalBoolean(w.running, child(path, "running")),
    config,
    resources,
    resourcesSource,
    stateParameters,
    stimulusLog,
    stimulusLogFull: stimulusLog.length >= 10_000,
    log,
    logFull: log.length >= 100_000,
    tasks,
    transitionCounter,
    dataKeys,
    ready: optionalKeyList(w, "ready", path, ctx),
    constrained: optionalKeyList(w, "constrained", path, ctx),
    executing: optionalKeyList(w, "executing", path, ctx),
    longRunning: optionalKeyList(w, "long_running", path, ctx),
    inFlightTasks: optionalKeyList(w, "in_flight_tasks", path, ctx),
    missingDepFlight: optionalKeyList(w, "missing_dep_flight", path, ctx),
    dataNeeded: optionalKeyListsByWorker(w, "data_needed", path, ctx),
    hasWhat: optionalKeyListsByWorker(w, "has_what", path, ctx),
    inFlightWorkers: optionalKeyListsByWorker(w, "in_flight_workers", path, ctx),
    busyWorkers,
    raw: w,
  };
}
