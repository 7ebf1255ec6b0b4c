/**
 * Loader for the cluster dumps that dask/distributed 2023.7.0 writes with
 * `Client.dump_cluster_state()` (`distributed/cluster_dump.py`): the input of
 * `weft replay`, which rebuilds each worker's state machine from its dumped
 * stimulus log.
 *
 * # Encodings
 *
 * - `*.msgpack.gz` (Dask's default): gzip of `msgpack.pack(state)`. Tuples are
 *   msgpack arrays, `None` is nil, `inf` is a float64 infinity, integers above
 *   2**32 are uint64 (decoded as bigints, turned back into numbers when safe).
 * - `*.yaml`: `yaml.dump(_tuple_to_list(state))` by PyYAML: `null`, `.inf`,
 *   `true`/`false`, and strings that PyYAML's resolver would read as something
 *   else are quoted (plain scalars are typed here with PyYAML's resolver, which
 *   differs from YAML 1.1: `y`, `n`, `1e3` are strings). PyYAML sorts mapping keys,
 *   so the insertion order of Python dicts is lost in this format (lists keep
 *   their order). `*.msgpack` (not gzipped) and `*.yaml.gz`/`*.yml` are also read.
 *
 * In both, the state went through `recursive_to_dict` first: sets, tuples,
 * deques and dict views became lists (a set in Python's iteration order of the
 * live run), objects without `_to_dict` became their `repr()` (`"<Status.running:
 * 'running'>"`, `"<TaskState 'x' memory>"`, `"<Serialize: b'…'>"`), and a dict key
 * that was a tuple became a list, unhashable, so it was stored as `str(list)`:
 * the tuple key `('x', 1)` is the string key `"['x', 1]"` in both encodings,
 * while the same key in a value position (an event's `key`, a log entry) is the
 * list `['x', 1]`.
 *
 * # Normalization
 *
 * The loader turns every encoding into the same tree of plain values
 * ({@link DumpValue}): mappings become plain objects with string keys, in the
 * file's order (JS puts integer-like keys first, as `JSON.parse` does for the
 * conformance vectors); bigints within ±(2**53-1) become numbers. Task keys are
 * strings as Python's `str()` writes them, as in the conformance vectors: a
 * non-string mapping key (a msgpack array or number, a YAML complex key) becomes
 * `str()` of its Python value (`('x', 1)` → `"('x', 1)"`), a string mapping key
 * holding `str()` of a list (`"['x', 1]"`, see above) becomes the tuple form
 * `"('x', 1)"`, and a task key in a value position (events' `key`/`keys`, log
 * entries, the worker's key lists, tasks' `key`) becomes its `str()` form too.
 * Caveat: an integral float key prints as an int (`2`, not `2.0`), since both
 * decode to the same JS number.
 *
 * # Structure (as found in the dumps of /work/shared/dumps)
 *
 * Top level: `{scheduler, workers, versions}`.
 *
 * - `versions`: `{scheduler: {host, packages}, workers: {address: {host, packages}}}`
 *   (`packages.distributed` is `"2023.7.0"`).
 * - `scheduler` (`Scheduler._to_dict`): `type, id, address, services, started,
 *   workers, status, thread_id, transition_log, transition_counter, tasks,
 *   task_groups, clients, memory, events, extensions`. `transition_log` entries
 *   are `[key, start, finish, recommendations {key: state}, stimulus_id, time]`;
 *   `workers` maps an address to the scheduler's WorkerState dict (`nthreads`,
 *   `memory_limit`, `resources`, `status`, `has_what` as TaskState reprs…);
 *   `tasks` maps a key to the scheduler's TaskState dict (every field, with
 *   `null`s; references to other tasks and workers are reprs).
 * - `workers` maps an address to `Worker._to_dict()` — or to a string when
 *   the worker did not answer (the `repr` of the error; reported in
 *   {@link ClusterDump.unavailableWorkers}). Its keys: `type` ("Worker"),
 *   `id`, `scheduler`, `nthreads`, `memory_limit` (bytes or `null`), `address`,
 *   `status` (`"<Status.running: 'running'>"`), `thread_id`, `logs` (`[level,
 *   message]` pairs), `config` (the whole `dask.config.config`), `transfer_incoming_log`,
 *   `transfer_outgoing_log`, then `WorkerState._to_dict()`: `running`, `ready`,
 *   `constrained` (keys in pop order), `data` (`{key: null}`), `data_needed`
 *   (`{worker: [keys]}`), `executing`, `has_what` (`{worker: [keys]}`),
 *   `long_running`, `in_flight_tasks`, `in_flight_workers` (`{worker: [keys]}`),
 *   `missing_dep_flight`, `busy_workers`, `log`, `stimulus_log`,
 *   `transition_counter`, `tasks`, `task_counts` and `task_cumulative_elapsed`
 *   (keyed by `"['prefix', 'state']"`, normalized to `"('prefix', 'state')"`),
 *   then the memory manager's `memory_target_fraction`, `memory_spill_fraction`,
 *   `memory_pause_fraction`, `max_spill`, `memory_monitor_interval`. The
 *   dump holds no resources, transfer limits or `validate` of the WorkerState:
 *   `WorkerDump.stateParameters` derives them the way `Worker.__init__` does.
 * - `stimulus_log` (a deque of at most 10,000): events as
 *   `StateMachineEvent._to_dict` writes them, `cls` then every public attribute
 *   in alphabetical order (`handled` — when it was handled — and `stimulus_id`
 *   included), after `to_loggable`: `ComputeTaskEvent` with `run_spec`,
 *   `function`, `args`, `kwargs` null, `who_has {key: [workers]}`, `nbytes {key:
 *   n}`, `priority [ints]`, `resource_restrictions`, `annotations`, `actor`,
 *   `duration`, `run_id`, `span_id`; `ExecuteSuccessEvent` with `value` null and
 *   `type` as `str(type)` (`"<class 'list'>"`, see {@link typeNameFromRepr});
 *   `ExecuteFailureEvent` with `exception`/`traceback` as `"<Serialize: …>"`
 *   reprs and `exception_text`/`traceback_text`; `GatherDepSuccessEvent` and
 *   `UpdateDataEvent` with `data {key: null}`; `FreeKeysEvent`/`RemoveReplicasEvent`
 *   with `keys`; `RemoveWorkerEvent`, `GatherDepNetworkFailureEvent` with
 *   `worker` (and `total_nbytes`). `FindMissingEvent`s are never logged.
 * - `log` (a deque of at most 100,000): tuples, now lists, of these shapes
 *   (see {@link classifyLogEntry}): `[key, start, recommended, final, {key:
 *   state}, stimulus_id, time]` (a transition); `[key, "compute-task" |
 *   "ensure-task-exists" | "receive-from-scatter", state, stimulus_id, time]`;
 *   `[key, "put-in-memory" | "remove-replica" | "missing-dep" | "cancel-compute",
 *   stimulus_id, time]`; `["free-keys", [keys], stimulus_id, time]`;
 *   `["gather-dependencies" | "request-dep" | "receive-dep" | "gather-dep-failed"
 *   | "busy-gather", worker, [keys], stimulus_id, time]` (the last four are
 *   written by the Worker, not the WorkerState).
 * - `tasks`: `{key: TaskState._to_dict_no_nest()}`, which drops every falsy
 *   field (`None`, `0`, `False`, `""`, empty containers) and `prefix`: an absent
 *   field means "falsy" (an absent `run_id` is 0, an absent `done` is false).
 *   Fields: `key, state, previous, next, done, priority, nbytes, run_id,
 *   duration, who_has, coming_from, dependencies, dependents, waiting_for_data,
 *   waiters` (task references as `"<TaskState 'key' state>"` reprs),
 *   `resource_restrictions, exception, traceback, exception_text,
 *   traceback_text, start_time, stop_time, startstops, span_id, annotations, …`.
 *
 * The `.yaml` and `.msgpack.gz` of the `shuffle` run are two dumps of the same
 * cluster taken at different moments, not one dump in two encodings: the YAML
 * one was written later (after the client released its keys: 157/169/135 more
 * `FreeKeysEvent`s, larger transition counters, no tasks left). The earlier
 * dump's stimulus logs and logs are exact prefixes of the later one's, and the
 * loader yields equal normalized values for them.
 *
 * # Files
 *
 * The loader lives in `clusterDump/`, one concept a file; this module re-exports
 * its public names.
 *
 * - `values.ts`: the normalized values ({@link DumpValue});
 * - `errors.ts`: {@link DumpFormatError}, paths of fields inside the dump, and the
 *   checked reads that report them;
 * - `pyRepr.ts`: Python's `repr()`/`str()`, written for keys and read back from the
 *   reprs Dask dumps;
 * - `encoding.ts`, `decode.ts`, `pyyamlScalars.ts`: the encodings, their decoding,
 *   and PyYAML's typing of plain YAML scalars;
 * - `normalize.ts`, `taskKeys.ts`: the normalized tree, and task keys in value positions;
 * - `events.ts`, `logEntries.ts`, `tasks.ts`: a worker's stimulus log, transition
 *   log and tasks;
 * - `daskConfig.ts`: a worker's dumped Dask configuration;
 * - `workerDump.ts`, `schedulerDump.ts`, `versions.ts`, `serverStatus.ts`,
 *   `topLevel.ts`: the typed parts of the dump and the whole of it;
 * - `load.ts`: the entry points, {@link loadClusterDump}, {@link loadClusterDumpSync}
 *   and {@link parseClusterDump}.
 */

export { DaskConfig } from "./clusterDump/daskConfig.ts";
export type { DumpEncoding } from "./clusterDump/encoding.ts";
export { dumpEncodingOf } from "./clusterDump/encoding.ts";
export { DumpFormatError } from "./clusterDump/errors.ts";
export type { DumpEvent } from "./clusterDump/events.ts";
export { EVENT_REQUIRED_FIELDS } from "./clusterDump/events.ts";
export type { ParseClusterDumpOptions } from "./clusterDump/load.ts";
export { loadClusterDump, loadClusterDumpSync, parseClusterDump } from "./clusterDump/load.ts";
export type { WorkerLogEntry, WorkerLogRecord } from "./clusterDump/logEntries.ts";
export { classifyLogEntry, WORKER_LOG_TAGS } from "./clusterDump/logEntries.ts";
export type { TaskRef } from "./clusterDump/pyRepr.ts";
export {
  listReprToTupleRepr,
  parsePyStrLiteral,
  parseTaskStateRepr,
  pyStrRepr,
  typeNameFromRepr,
} from "./clusterDump/pyRepr.ts";
export type { SchedulerDump } from "./clusterDump/schedulerDump.ts";
export type { DumpTask } from "./clusterDump/tasks.ts";
export type { ClusterDump } from "./clusterDump/topLevel.ts";
export type { DumpList, DumpObject, DumpValue } from "./clusterDump/values.ts";
export { isDumpObject } from "./clusterDump/values.ts";
export type { DumpVersions } from "./clusterDump/versions.ts";
export type { WorkerDump, WorkerStateParameters } from "./clusterDump/workerDump.ts";
