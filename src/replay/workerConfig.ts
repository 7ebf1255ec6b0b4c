import type { WorkerStateParameters } from "../protocol/clusterDump.ts";
import { recordedSizeof, recordedTypeName } from "../protocol/daskJson/values.ts";
import type { WorkerStateOptions } from "../worker/state/workerState.ts";

/** `null` (infinity in the conformance-config convention) as a number. */
function orInfinity(n: number | null): number {
  return n === null ? Number.POSITIVE_INFINITY : n;
}

/**
 * The options of a WorkerState configured as Dask's `Worker.__init__` configured the
 * dumped worker's own (address, threads, resources, transfer limits, validation; see
 * {@link WorkerStateParameters}), with services for opaque recorded values: sizes and
 * type names are read from the stand-ins of `dumpEvents.ts`.
 * `transfer_incoming_bytes_throttle_threshold` has no option: set it after
 * construction (see {@link applyThrottleThreshold}).
 */
export function workerStateOptions(p: WorkerStateParameters): WorkerStateOptions {
  return {
    nthreads: p.nthreads,
    address: p.address,
    resources: p.resources,
    transferIncomingCountLimit: p.transfer_incoming_count_limit,
    transferIncomingBytesLimit: orInfinity(p.transfer_incoming_bytes_limit),
    transferMessageBytesLimit: orInfinity(p.transfer_message_bytes_limit),
    validate: p.validate,
    transitionCounterMax: p.transition_counter_max,
    data: new Map<string, unknown>(),
    sizeof: recordedSizeof,
    typeName: recordedTypeName,
  };
}

/** Sets the one parameter the WorkerState constructor does not take. */
export function applyThrottleThreshold(
  ws: { transferIncomingBytesThrottleThreshold: number },
  p: WorkerStateParameters,
): void {
  ws.transferIncomingBytesThrottleThreshold = p.transfer_incoming_bytes_throttle_threshold;
}
