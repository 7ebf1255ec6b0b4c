/**
 * Adaptive scaling of a LocalCluster (Dask's `Adaptive`): every interval, ask
 * the scheduler's state how many workers the work calls for
 * (`adaptiveTarget`), within a minimum and a maximum, and scale to it: up at
 * once, down only once that many intervals in a row have asked for fewer, so
 * that a pause between two computations does not throw workers away.
 */

import type { Logger } from "pino";
import { adaptiveTarget } from "../scheduler/state/adaptive.ts";
import { isRetiring } from "../scheduler/state/retire.ts";
import type { SchedulerState } from "../scheduler/state/schedulerState.ts";
import type { WorkerInfo } from "../scheduler/state/workerInfo.ts";
import type { OptionNames } from "../util/knownOptions.ts";
import { showValue } from "../util/showValue.ts";
import { MAX_TIMER_MS } from "../util/timers.ts";
import { knownOptionsOf } from "./argChecks.ts";

/** Options of `LocalCluster.adapt`; null for any of them means its default, as Dask's `None`. */
export interface AdaptOptions {
  /** Never fewer workers. Default 0. */
  minimum?: number | null;
  /** Never more workers (0 scales the cluster to nothing). Default: no limit. */
  maximum?: number | null;
  /** How often to look, in ms. Default 1,000 (Dask's `interval`). */
  intervalMs?: number | null;
  /** Consecutive intervals asking for fewer workers before the cluster shrinks. Default 3 (Dask's `wait_count`). */
  waitCount?: number | null;
  /** Workers enough to run the work there is in about this long, in ms. Default 5,000 (Dask's `target_duration`). */
  targetDurationMs?: number | null;
}

/** Every option of {@link AdaptOptions}: others are refused. */
const ADAPT_OPTIONS: OptionNames<AdaptOptions> = {
  minimum: true,
  maximum: true,
  intervalMs: true,
  waitCount: true,
  targetDurationMs: true,
};

/** What adaptive scaling needs of its cluster. */
export interface AdaptiveHost {
  /** The scheduler's state machine, read each interval. */
  readonly state: SchedulerState;
  /** The workers running or starting, not being closed or retired. */
  workerCount(): number;
  /**
   * The addresses of the workers it started (and may stop): the others that
   * joined its scheduler count toward the workers the work calls for, but are
   * not its to retire. Without it, every worker of the scheduler is its own.
   */
  ownWorkers?(): ReadonlySet<string>;
  /** Start or retire workers until there are `n` of its own. */
  scaleTo(n: number): Promise<void>;
  /** Where scaling decisions and failures are logged. */
  readonly logger: Logger;
}

function checkCount(name: string, v: unknown, min: number): number {
  if (!(Number.isInteger(v) && (v as number) >= min) && v !== Number.POSITIVE_INFINITY) {
    throw new RangeError(`adapt: ${name} must be an integer ≥ ${min}, got ${showValue(v)}`);
  }
  return v as number;
}

function checkMs(name: string, v: unknown): number {
  if (!(typeof v === "number" && v > 0 && v <= MAX_TIMER_MS)) {
    throw new RangeError(
      `adapt: ${name} must be a number > 0 and at most ${MAX_TIMER_MS}, got ${showValue(v)}`,
    );
  }
  return v;
}

/** A running adaptive scaling; {@link stop} ends it (closing the cluster does too). */
export class Adaptive {
  /** Never fewer workers than this (the `minimum` option; default 0). */
  readonly minimum: number;
  /** Never more workers than this (the `maximum` option; default Infinity: no limit). */
  readonly maximum: number;
  /** How often it looks, in ms (the `intervalMs` option; default 1,000). */
  readonly intervalMs: number;
  /** Consecutive intervals asking for fewer workers before the cluster shrinks (default 3). */
  readonly waitCount: number;
  /**
   * It aims for workers enough to run the work there is in about this long, in ms (default 5,000).
   */
  readonly targetDurationMs: number;
  private readonly timer: NodeJS.Timeout;
  private busy = false;
  private downs = 0;
  private stopped = false;

  /** Start looking every `intervalMs`; throws a RangeError naming a bad option. */
  constructor(
    private readonly host: AdaptiveHost,
    options: AdaptOptions = {},
  ) {
    knownOptionsOf("adapt", options, ADAPT_OPTIONS);
    this.minimum = checkCount("minimum", options.minimum ?? 0, 0);
    if (this.minimum === Number.POSITIVE_INFINITY) {
      throw new RangeError("adapt: minimum must be finite");
    }
    // 0 is allowed, as Dask's `adapt(maximum=0)` is: it scales the cluster to nothing.
    this.maximum = checkCount("maximum", options.maximum ?? Number.POSITIVE_INFINITY, 0);
    if (this.maximum < this.minimum) {
      throw new RangeError(
        `adapt: maximum (${this.maximum}) must be at least minimum (${this.minimum})`,
      );
    }
    this.intervalMs = checkMs("intervalMs", options.intervalMs ?? 1000);
    this.waitCount = checkCount("waitCount", options.waitCount ?? 3, 1);
    this.targetDurationMs = checkMs("targetDurationMs", options.targetDurationMs ?? 5000);
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
  }

  /** True once stopped. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /**
   * The workers of its own the work calls for now, within the minimum and the
   * maximum: those the scheduler's state wants less the others there are
   * (not being retired), which only its own idle ones may make fewer.
   * Counting only its own, a cluster with two workers of others started as many
   * as the work called for on top of them, and kept its own idle while those
   * others were busy (the work wanting them there).
   */
  target(): number {
    const s = this.host.state;
    const own = this.host.ownWorkers?.();
    const closable = own === undefined ? undefined : (ws: WorkerInfo) => own.has(ws.address);
    let others = 0;
    if (own !== undefined) {
      for (const ws of s.workers.values()) if (!own.has(ws.address) && !isRetiring(s, ws)) others++;
    }
    const wanted = adaptiveTarget(s, this.targetDurationMs / 1000, closable) - others;
    return Math.min(this.maximum, Math.max(this.minimum, wanted));
  }

  /** One look: scale up at once, down after `waitCount` looks in a row asking for fewer. */
  async tick(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      const target = this.target();
      const have = this.host.workerCount();
      if (target > have || (target < have && ++this.downs >= this.waitCount)) {
        this.downs = 0;
        this.host.logger.info({ from: have, to: target }, "adaptive: scaling");
        await this.host.scaleTo(target);
      } else if (target >= have) {
        this.downs = 0;
      }
    } catch (err) {
      if (!this.stopped) {
        this.host.logger.error({ err }, "adaptive scaling failed; trying again next interval");
      }
    } finally {
      this.busy = false;
    }
  }

  /** Stop scaling; the workers there are stay. Idempotent. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }
}
