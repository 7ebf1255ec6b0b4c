/**
 * For the scheduler's tests: a validating scheduler listening in-process, and a raw
 * connection to it that plays a worker or a client and records every message it
 * receives.
 */
import type { Comm, ConnectOptions } from "../comm/comm.ts";
import { connect } from "../comm/connect.ts";
import { wireVersion } from "../protocol/version.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import { Scheduler } from "./scheduler.ts";

/**
 * A validating scheduler listening at `listen` (in-process), logging to memory;
 * `track` is given it to close at the end of the test.
 */
export async function startTestScheduler(
  listen: string,
  track: (s: Scheduler) => void,
): Promise<Scheduler> {
  const { logger } = memoryLogger();
  const s = await Scheduler.start({ listen, validate: true, logger });
  track(s);
  return s;
}

/** A raw worker's hello: `register-worker` of `address` with `nthreads` threads. */
export function registerWorker(address: string, nthreads = 1) {
  return {
    op: "register-worker",
    address,
    nthreads,
    resources: {},
    stimulusId: `reg-${address}`,
    ...wireVersion(),
  };
}

/** A raw client's hello: `register-client` as `clientId`. */
export function registerClient(clientId: string) {
  return { op: "register-client", clientId, ...wireVersion() };
}

/** Client c1's graph of one task, `x = inc(1)` (stimulus g1), as an update-graph message. */
export const INC_X_GRAPH = {
  op: "update-graph",
  clientId: "c1",
  keys: ["x"],
  stimulusId: "g1",
  tasks: new Map([["x", { spec: { fn: "inc", args: [1] }, dependencies: [] }]]),
} as const;

/** A connection made by {@link rawPeer}. */
export interface RawPeer {
  /** The connection. */
  readonly comm: Comm;
  /** The scheduler's answer to the first message. */
  readonly reply: Record<string, unknown>;
  /** Every message received since, in order. */
  readonly received: Record<string, unknown>[];
  /** Resolves with the first received message `pred` accepts, waiting for it if need be. */
  waitFor(pred: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

/**
 * Connect to `address` (with `options`: a `tls://` one's credentials), send
 * `hello` and read the answer; `track` is given the connection to close at the
 * end of the test.
 */
export async function rawPeer(
  address: string,
  hello: Record<string, unknown>,
  track: (c: { close(): Promise<void> }) => void,
  options: ConnectOptions = {},
): Promise<RawPeer> {
  const comm: Comm = await connect(address, options);
  track({ close: () => comm.close() });
  await comm.send(hello);
  const reply = (await comm.recv()) as Record<string, unknown>;
  const received: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  void (async () => {
    try {
      for await (const frame of comm) {
        for (const m of frame as Record<string, unknown>[]) received.push(m);
        for (const w of waiters.splice(0)) w();
      }
    } catch {
      // closed
    }
  })();
  const waitFor = async (pred: (m: Record<string, unknown>) => boolean) => {
    for (;;) {
      const hit = received.find(pred);
      if (hit !== undefined) return hit;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { comm, reply, received, waitFor };
}
