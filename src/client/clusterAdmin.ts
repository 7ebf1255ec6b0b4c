/**
 * The operations on the cluster's workers and the results they hold, asked of
 * the scheduler: `replicate`, `rebalance`, retiring and restarting workers, and
 * the waits for workers to be there (`waitForWorkers`, and the return of those
 * restarted). Apart from the client: each is a request and its answer, or a
 * poll of the scheduler's workers, and needs of the client only its requests,
 * its workers and the holding of futures meanwhile (see {@link AdminHost}).
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { WorkerIdentity } from "../protocol/messagesSession.ts";
import { workersProblem } from "../scheduler/state/eventValidation.ts";
import { checkKnownOptions } from "../util/knownOptions.ts";
import { showValue } from "../util/showValue.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import { raceSignal } from "../worker/raceSignal.ts";
import { checkOptionalMs, knownOptionsOf, nullsAsDefaults } from "./argChecks.ts";
import {
  RebalanceError,
  ReplicateError,
  RestartTimeoutError,
  WorkersTimeoutError,
} from "./errors.ts";
import type { Future } from "./future.ts";
import { workersOption } from "./graph.ts";
import {
  REBALANCE_OPTIONS,
  REPLICATE_OPTIONS,
  RESTART_OPTIONS,
  WAIT_FOR_WORKERS_OPTIONS,
} from "./optionNames.ts";
import type { Requests } from "./requests.ts";
import type { Results } from "./results.ts";

/** What {@link ClusterAdmin} needs of its client. */
export interface AdminHost {
  /** The client's id, in its requests. */
  readonly id: string;
  /** The client's requests answered under their stimulus id. */
  readonly requests: Pick<Requests, "ask" | "stimulusId">;
  /** Holding futures, and waiting for them to finish, while their keys are worked on. */
  readonly results: Pick<Results, "hold" | "unhold" | "untilFinished">;
  /** The workers connected to the scheduler. */
  workers(): Promise<WorkerIdentity[]>;
  /** Throws once the client is closed. */
  checkOpen(): void;
  /** `futures` as an array; a TypeError naming `op` unless each is a future of the client. */
  ownFutures(op: string, futures: Future | readonly Future[]): readonly Future[];
}

/** The options of `restart` and `restartWorkers`, defaults filled in; a TypeError naming `op` if bad. */
function restartOptions(
  op: string,
  options: { timeoutMs?: number; waitForWorkers?: boolean } | undefined,
): { timeoutMs: number; waitForWorkers: boolean } {
  const { timeoutMs = 30_000, waitForWorkers = true } = knownOptionsOf(
    op,
    options,
    RESTART_OPTIONS,
  );
  // Not 0: the restart would be asked for, then said unanswered whatever the scheduler did.
  checkOptionalMs(op, "timeoutMs", timeoutMs, true);
  if (typeof waitForWorkers !== "boolean") {
    throw new TypeError(
      `${op}: waitForWorkers must be a boolean, got ${showValue(waitForWorkers)}`,
    );
  }
  return { timeoutMs, waitForWorkers };
}

/**
 * The client's operations on the cluster's workers: each method does what the
 * `Client` method of that name does, whose documentation is there.
 */
export class ClusterAdmin {
  constructor(private readonly host: AdminHost) {}

  async replicate(
    futures: Future | readonly Future[],
    options: { n?: number | null; workers?: string | readonly string[] | null } = {},
  ): Promise<void> {
    const { n, workers } = nullsAsDefaults(
      knownOptionsOf("replicate", options, REPLICATE_OPTIONS),
      ["n", "workers"],
    );
    if (n !== undefined && !(Number.isSafeInteger(n) && n >= 1)) {
      throw new TypeError(`replicate: n must be an integer ≥ 1, got ${showValue(n)}`);
    }
    const names = workersOption({ workers });
    const problem = workers === undefined ? null : workersProblem(names);
    if (problem !== null) throw new TypeError(`replicate: workers ${problem}`);
    const list = this.host.ownFutures("replicate", futures);
    if (list.length === 0) return;
    this.host.results.hold(list);
    try {
      await this.host.results.untilFinished(list);
      this.host.checkOpen();
      const answer = await this.host.requests.ask({
        op: "replicate",
        keys: [...new Set(list.map((f) => f.key))],
        ...(n !== undefined ? { n } : {}),
        ...(names !== undefined ? { workers: [...names] } : {}),
        clientId: this.host.id,
        stimulusId: this.host.requests.stimulusId("replicate"),
      });
      if (answer.failed.length > 0) throw new ReplicateError(answer.failed);
    } finally {
      this.host.results.unhold(list);
    }
  }

  async rebalance(
    futures?: Future | readonly Future[] | null,
    options: { workers?: string | readonly string[] | null } = {},
  ): Promise<number> {
    const names = workersOption(knownOptionsOf("rebalance", options, REBALANCE_OPTIONS));
    const problem = names === undefined ? null : workersProblem(names);
    if (problem !== null) throw new TypeError(`rebalance: workers ${problem}`);
    // No futures (undefined or null, Dask's None): every result in memory.
    const list = futures == null ? null : this.host.ownFutures("rebalance", futures);
    if (list !== null) {
      if (list.length === 0) return 0;
      this.host.results.hold(list);
    }
    try {
      if (list !== null) await this.host.results.untilFinished(list);
      this.host.checkOpen();
      const answer = await this.host.requests.ask({
        op: "rebalance",
        ...(list !== null ? { keys: [...new Set(list.map((f) => f.key))] } : {}),
        ...(names !== undefined ? { workers: [...names] } : {}),
        clientId: this.host.id,
        stimulusId: this.host.requests.stimulusId("rebalance"),
      });
      if (answer.failed.length > 0) throw new RebalanceError(answer.failed);
      return answer.moved;
    } finally {
      if (list !== null) this.host.results.unhold(list);
    }
  }

  async retireWorkers(
    workers?: string | readonly string[] | { readonly n: number } | null,
  ): Promise<{ retired: string[]; failed: { worker: string; reason: string }[] }> {
    let which: { workers: string[] } | { n: number } | Record<string, never>;
    // Nothing (undefined or null, Dask's None): the idle workers the cluster can spare.
    if (workers == null) {
      which = {};
    } else if (typeof workers === "object" && workers !== null && !Array.isArray(workers)) {
      // { workers: [...] } or a misspelt n is named as such, not called a missing n.
      checkKnownOptions("retireWorkers", workers, { n: true });
      const n: unknown = (workers as { n?: unknown }).n;
      if (!(Number.isSafeInteger(n) && (n as number) >= 1)) {
        throw new TypeError(`retireWorkers: n must be an integer ≥ 1, got ${showValue(n)}`);
      }
      which = { n: n as number };
    } else {
      const names = workersOption({ workers: workers as string | readonly string[] });
      const problem = workersProblem(names);
      if (problem !== null) throw new TypeError(`retireWorkers: workers ${problem}`);
      which = { workers: [...(names ?? [])] };
    }
    const answer = await this.host.requests.ask({
      op: "retire-workers",
      ...which,
      clientId: this.host.id,
      stimulusId: this.host.requests.stimulusId("retire-workers"),
    });
    return { retired: [...answer.retired], failed: answer.failed.map((f) => ({ ...f })) };
  }

  async restart(options: { timeoutMs?: number; waitForWorkers?: boolean } = {}): Promise<void> {
    const { timeoutMs, waitForWorkers } = restartOptions("restart", options);
    const start = Date.now();
    const answer = await beforeDeadline(
      this.host.requests.ask({
        op: "restart",
        clientId: this.host.id,
        stimulusId: this.host.requests.stimulusId("restart"),
      }),
      start + timeoutMs,
      () => unansweredRestart("restart", timeoutMs),
    );
    if (waitForWorkers) {
      await this.untilBack(answer.workers.length, answer.nannies.length, timeoutMs, start);
    }
  }

  /**
   * After a restart asked for at `start`: wait until `wanted` workers are
   * connected, or throw a {@link RestartTimeoutError} once `timeoutMs` have
   * passed since `start`.
   */
  private async untilBack(
    wanted: number,
    nannies: number,
    timeoutMs: number,
    start: number,
  ): Promise<void> {
    const left = Math.max(0, timeoutMs - (Date.now() - start));
    await this.untilWorkers(
      wanted,
      left,
      100,
      () => true,
      (seen) => new RestartTimeoutError(wanted, seen, timeoutMs, nannies),
    );
  }

  async restartWorkers(
    workers: string | readonly string[],
    options: { timeoutMs?: number; waitForWorkers?: boolean } = {},
  ): Promise<{ restarted: string[]; failed: { worker: string; reason: string }[] }> {
    const names = workersOption({ workers });
    const problem = workersProblem(names);
    if (problem !== null) throw new TypeError(`restartWorkers: workers ${problem}`);
    const { timeoutMs, waitForWorkers } = restartOptions("restartWorkers", options);
    const start = Date.now();
    const answer = await beforeDeadline(
      this.host.requests.ask({
        op: "restart-workers",
        workers: [...(names ?? [])],
        clientId: this.host.id,
        stimulusId: this.host.requests.stimulusId("restart-workers"),
      }),
      start + timeoutMs,
      () => unansweredRestart("restartWorkers", timeoutMs),
    );
    const out = {
      restarted: [...answer.restarted],
      failed: answer.failed.map((f) => ({ ...f })),
    };
    if (waitForWorkers && answer.restarted.length > 0) {
      // Every worker restarted has a nanny.
      const wanted = answer.remaining + answer.restarted.length;
      await this.untilBack(wanted, wanted, timeoutMs, start);
    }
    return out;
  }

  async waitForWorkers(
    n: number,
    options: { timeoutMs?: number | null; pollMs?: number } = {},
  ): Promise<WorkerIdentity[]> {
    // timeoutMs null, as Dask's timeout=None: no timeout, the default.
    const { timeoutMs, pollMs = 100 } = nullsAsDefaults(
      knownOptionsOf("waitForWorkers", options, WAIT_FOR_WORKERS_OPTIONS),
      ["timeoutMs"],
    );
    if (!Number.isSafeInteger(n) || n < 0) {
      throw new TypeError(`waitForWorkers: n must be an integer ≥ 0, got ${showValue(n)}`);
    }
    // Not `timeoutMs >= 0` alone: [] passes that, and made a deadline of 0.
    if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs >= 0)) {
      throw new TypeError(
        `waitForWorkers: timeoutMs must be a number of milliseconds ≥ 0, got ${showValue(timeoutMs)}`,
      );
    }
    checkOptionalMs("waitForWorkers", "pollMs", pollMs, true);
    return this.untilWorkers(
      n,
      timeoutMs,
      pollMs,
      (w) => w.status === "running",
      (running, looked) => {
        const err = new WorkersTimeoutError(n, running, timeoutMs as number);
        // Not "only 0 of n running": how many run is not known.
        if (!looked) {
          err.message = `waitForWorkers: the scheduler did not answer within the timeout (${timeoutMs} ms), so how many of the ${n} workers wanted run is not known: is it still running?`;
        }
        return err;
      },
    );
  }

  /**
   * Ask the scheduler for its workers every `pollMs` until `n` of them are
   * `counted`; after `timeoutMs` (if given), throw `timedOut(how many were at
   * the last look, whether the scheduler answered any)`.
   */
  private async untilWorkers(
    n: number,
    timeoutMs: number | undefined,
    pollMs: number,
    counted: (w: WorkerIdentity) => boolean,
    timedOut: (seen: number, looked: boolean) => Error,
  ): Promise<WorkerIdentity[]> {
    const start = Date.now();
    let seen = 0;
    let looked = false;
    for (;;) {
      // Each poll within the time left: a scheduler that stops answering (stopped, a
      // network gone quiet) must not hold the wait past its timeout.
      const workers =
        timeoutMs === undefined
          ? await this.host.workers()
          : await beforeDeadline(this.host.workers(), start + timeoutMs, () =>
              timedOut(seen, looked),
            );
      looked = true;
      seen = workers.filter(counted).length;
      if (seen >= n) return workers;
      const left = timeoutMs === undefined ? pollMs : timeoutMs - (Date.now() - start);
      if (left <= 0) throw timedOut(seen, looked);
      await sleep(Math.min(pollMs, left));
    }
  }
}

/**
 * `promise`, or the error `late()` makes if it has not settled by `deadline`
 * (`Date.now()` milliseconds); its later outcome is then ignored.
 */
function beforeDeadline<T>(promise: Promise<T>, deadline: number, late: () => Error): Promise<T> {
  // Past a timer's reach (waitForWorkers takes any timeout), as good as never.
  if (!(deadline - Date.now() <= MAX_TIMER_MS)) return promise;
  const overdue = new AbortController();
  const timer = setTimeout(() => overdue.abort(late()), Math.max(0, deadline - Date.now()));
  return raceSignal(promise, overdue.signal).finally(() => clearTimeout(timer));
}

/** The scheduler did not answer a restart within its timeout. */
function unansweredRestart(method: string, timeoutMs: number): Error {
  return new Error(
    `${method}: the scheduler did not answer within the timeout (${timeoutMs} ms): is it still running?`,
  );
}
