/** Counters of one simulated run: events, faults injected, and (optionally) time in each machine. */

import { emptyFaultCounts, type FaultKind } from "./faults.ts";

/** What a run counted. */
export class SimStats {
  /** Events the event queue fired. */
  events = 0;
  /** Stimuli handled by the scheduler state machine. */
  schedulerStimuli = 0;
  /** Stimuli handled by all worker state machines. */
  workerStimuli = 0;
  /** Microseconds spent inside the scheduler state machine (when timing is on). */
  schedulerMicros = 0;
  /** Microseconds spent inside worker state machines (when timing is on). */
  workerMicros = 0;
  /** Tasks executed to completion on workers (reruns included). */
  executions = 0;
  /** Peer transfers that delivered data. */
  transfers = 0;
  /** Virtual seconds at the end. */
  virtualTime = 0;
  /** Faults injected, by kind. */
  readonly faults: Record<FaultKind, number> = emptyFaultCounts();
}
