/**
 * Hooks into a simulated cluster's plumbing, for deliberately broken
 * variants (see `variants.ts`): they can drop or alter what flows between the
 * machines, or tamper with a machine after a stimulus, without touching the
 * cores. A hook keeps whatever state it needs in its closure and draws no
 * randomness, so a broken run still replays from its seed.
 */

import type { SchedulerMessage } from "../protocol/messages.ts";
import type { SchedulerEvent } from "../scheduler/state/events.ts";
import type { SchedulerState } from "../scheduler/state/schedulerState.ts";
import type { StateMachineEvent } from "../worker/state/events.ts";

/** What a hook may look at. */
export interface HookContext {
  /** The scheduler state machine (read only, unless a variant means to corrupt it). */
  readonly scheduler: SchedulerState;
  /** Virtual time. */
  readonly now: number;
}

/** Optional interception points; each returns what to pass on, or null to drop it. */
export interface SimHooks {
  /** A stimulus about to be handed to the scheduler state machine. */
  schedulerStimulus?(ctx: HookContext, ev: SchedulerEvent): SchedulerEvent | null;
  /** A message the scheduler state machine just produced, before it enters the network. */
  schedulerMessage?(ctx: HookContext, msg: SchedulerMessage): SchedulerMessage | null;
  /** An event about to be handed to the worker state machine at `worker`. */
  workerEvent?(ctx: HookContext, worker: string, ev: StateMachineEvent): StateMachineEvent | null;
  /** The value a task computes from the correct one (e.g. to return a wrong one). */
  taskValue?(ctx: HookContext, key: string, correct: number): number;
  /** Called after the scheduler handled a stimulus, before validation. */
  afterScheduler?(ctx: HookContext): void;
}
