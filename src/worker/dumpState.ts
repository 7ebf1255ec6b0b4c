/**
 * A worker as Dask's `Worker._to_dict` writes it into a cluster dump
 * (`Client.dump_cluster_state`, `weft dump`): the server's fields, then the
 * state machine's (`WorkerState._to_dict`), with the stimulus log in Dask's
 * dict form of the events (`eventToDict`, values stripped as `to_loggable`
 * strips them). Read back by `src/protocol/clusterDump.ts`, so that `weft
 * replay` and `weft story` work on weft's clusters as on Dask's.
 *
 * Beyond Dask's fields, `state_parameters` gives the `WorkerState` options
 * the worker ran with (the conformance vectors' `config`): a Dask dump holds
 * only the Dask configuration they are derived from, and weft's limits are
 * options of its own (an incoming-bytes limit without a memory limit, say).
 */

import { eventToDict } from "../protocol/daskJson/events.ts";
import type { LogRecord } from "../util/logRecords.ts";
import type { StateMachineEvent } from "./state/events.ts";
import { workerStateToDict } from "./state/toDict.ts";
import type { WorkerState } from "./state/workerState.ts";

/** What the dump of a worker is made of. */
export interface WorkerDumpSource {
  readonly address: string;
  readonly scheduler: string;
  /** The server's status (`running`, `paused`, …). */
  readonly status: string;
  /** The memory limit in bytes, or null. */
  readonly memoryLimit: number | null;
  /** The worker's recent log records. */
  readonly logs: readonly LogRecord[];
  readonly state: WorkerState;
}

/** A stimulus as Dask's dump records it: its dict form and when it was handled. */
export function dumpedEvent(ev: StateMachineEvent): Record<string, unknown> {
  const d = eventToDict(ev) as Record<string, unknown>;
  d.handled = ev.handled ?? null;
  return d;
}

/** A finite number, or null for an infinite (no) limit, as the vectors' config writes it. */
function limit(n: number): number | null {
  return Number.isFinite(n) ? n : null;
}

/** The worker's dict in a cluster dump. */
export function workerDumpDict(w: WorkerDumpSource): Record<string, unknown> {
  const ws = w.state;
  const stateDict = workerStateToDict(ws, ["stimulus_log"]);
  return {
    type: "Worker",
    id: null,
    scheduler: w.scheduler,
    address: w.address,
    status: `<Status.${w.status}: '${w.status}'>`,
    nthreads: ws.nthreads,
    memory_limit: w.memoryLimit,
    logs: w.logs.map((r) => [r.level.toUpperCase(), r.err ? `${r.msg}: ${r.err}` : r.msg]),
    // The Dask configuration a Dask dump reader derives the state machine's limits from.
    config: {
      distributed: {
        worker: {
          connections: { outgoing: ws.transferIncomingCountLimit },
          memory: { transfer: false },
          transfer: { "message-bytes-limit": limit(ws.transferMessageBytesLimit) ?? "inf" },
          validate: ws.validate,
          resources: Object.fromEntries(ws.totalResources),
        },
      },
    },
    state_parameters: {
      nthreads: ws.nthreads,
      address: w.address,
      resources: Object.fromEntries(ws.totalResources),
      transfer_incoming_count_limit: ws.transferIncomingCountLimit,
      transfer_incoming_bytes_limit: limit(ws.transferIncomingBytesLimit),
      transfer_message_bytes_limit: limit(ws.transferMessageBytesLimit),
      transfer_incoming_bytes_throttle_threshold: ws.transferIncomingBytesThrottleThreshold,
      validate: ws.validate,
      transition_counter_max: false,
    },
    transfer_incoming_log: [],
    transfer_outgoing_log: [],
    ...stateDict,
    stimulus_log: ws.stimulusLog.toArray().map(dumpedEvent),
  };
}
