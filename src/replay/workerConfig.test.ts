import { describe, expect, it } from "vitest";
import type { WorkerStateParameters } from "../protocol/clusterDump.ts";
import { WorkerState } from "../worker/state/workerState.ts";
import { applyThrottleThreshold, workerStateOptions } from "./workerConfig.ts";

const params: WorkerStateParameters = {
  nthreads: 3,
  address: "tcp://127.0.0.1:7",
  resources: { GPU: 2 },
  transfer_incoming_count_limit: 4,
  transfer_incoming_bytes_limit: 1_000,
  transfer_message_bytes_limit: 2_000,
  transfer_incoming_bytes_throttle_threshold: 300,
  validate: true,
  transition_counter_max: 99,
};

describe("a replayed worker's configuration", () => {
  it("is the dumped worker's own", () => {
    const ws = new WorkerState(workerStateOptions(params));
    applyThrottleThreshold(ws, params);
    expect({
      nthreads: ws.nthreads,
      address: ws.address,
      resources: Object.fromEntries(ws.totalResources),
      countLimit: ws.transferIncomingCountLimit,
      bytesLimit: ws.transferIncomingBytesLimit,
      messageLimit: ws.transferMessageBytesLimit,
      throttle: ws.transferIncomingBytesThrottleThreshold,
      validate: ws.validate,
      counterMax: ws.transitionCounterMax,
    }).toEqual({
      nthreads: 3,
      address: "tcp://127.0.0.1:7",
      resources: { GPU: 2 },
      countLimit: 4,
      bytesLimit: 1_000,
      messageLimit: 2_000,
      throttle: 300,
      validate: true,
      counterMax: 99,
    });
  });

  it("reads a null limit as infinite", () => {
    const ws = new WorkerState(
      workerStateOptions({
        ...params,
        validate: false,
        transfer_incoming_bytes_limit: null,
        transfer_message_bytes_limit: null,
      }),
    );
    expect(ws.transferIncomingBytesLimit).toBe(Number.POSITIVE_INFINITY);
    expect(ws.transferMessageBytesLimit).toBe(Number.POSITIVE_INFINITY);
    expect(ws.validate).toBe(false);
  });
});
