/**
 * `client.amm`: the scheduler's Active Memory Manager operated at run time
 * (Dask's `AMMClientProxy`): start and stop its periodic rounds, ask whether
 * they run, run one round now. Each method is one `amm` request to the
 * scheduler (Dask's `amm_handler`), whatever the scheduler's
 * `activeMemoryManager` option said at its start.
 */

import type { AmmMethod, AmmStatus } from "../protocol/messagesSession.ts";

/** Sends an `amm` request with `method` (the client checks it is open first): the scheduler's answer. */
export type AmmRequest = (method: AmmMethod) => Promise<unknown>;

/**
 * The scheduler's Active Memory Manager, as a client operates it
 * (`client.amm`, Dask's `client.amm`): ReduceReplicas, which drops the
 * replicas of results no task needs (docs/scheduler.md, "Active memory
 * manager"). Each method rejects with a `ClientClosedError` once the client
 * is closed.
 */
export class ActiveMemoryManagerClient {
  /** @param request sends one `amm` request; the client's, checking it is open. */
  constructor(private readonly request: AmmRequest) {}

  /**
   * Run a round every `activeMemoryManagerIntervalMs` of the scheduler
   * (default 2000) from now on, also when it was started with
   * `activeMemoryManager: false`; nothing if the rounds run already.
   * Resolves with the status then (Dask's `start` returns nothing).
   */
  async start(): Promise<AmmStatus> {
    return statusOf(await this.request("start"));
  }

  /**
   * Run no more periodic rounds (`runOnce` still runs one); nothing if none
   * run. Resolves with the status then (Dask's `stop` returns nothing).
   */
  async stop(): Promise<AmmStatus> {
    return statusOf(await this.request("stop"));
  }

  /** Whether a round runs every `activeMemoryManagerIntervalMs` now (Dask's `running()`). */
  async running(): Promise<boolean> {
    return (await this.status()).running;
  }

  /**
   * Whether the rounds run, and the time between them while they run (the
   * scheduler's `activeMemoryManagerIntervalMs`): what `weft amm status` prints.
   */
  async status(): Promise<AmmStatus> {
    return statusOf(await this.request("status"));
  }

  /**
   * Run one round now (Dask's `run_once`), whether the periodic rounds run or
   * not, as they run it (the `reduce-replicas` stimulus): resolves, once the
   * scheduler has sent its `remove-replicas`, with the number of replicas the
   * round asked workers to drop (Dask's answers nothing). The workers drop
   * them soon after; a round never asks a worker that a task needing the key
   * is queued or executing on.
   */
  async runOnce(): Promise<number> {
    return (await this.request("run-once")) as number;
  }
}

/** The status in the scheduler's answer, as its own object. */
function statusOf(answer: unknown): AmmStatus {
  const got = answer as AmmStatus;
  return { running: got.running, intervalMs: got.intervalMs };
}
