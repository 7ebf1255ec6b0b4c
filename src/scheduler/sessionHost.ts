/** What a worker's or a client's session needs of the scheduler server. */

import type { Logger } from "pino";
import type { Counters } from "./counters.ts";
import type { Router } from "./router.ts";
import type { ResolvedSchedulerOptions } from "./schedulerOptions.ts";
import type { SchedulerEvent } from "./state/events.ts";
import type { SchedulerState } from "./state/schedulerState.ts";
import type { StimulusRunner } from "./stimulusRunner.ts";

/** The scheduler server as its sessions see it. */
export interface SessionHost {
  readonly options: ResolvedSchedulerOptions;
  readonly state: SchedulerState;
  readonly router: Router;
  readonly runner: StimulusRunner;
  readonly counters: Counters;
  readonly logger: Logger;
  /** True until the server closes or fails. */
  readonly isRunning: boolean;
  /** Hand stimuli to the state machine and route what it returns. */
  dispatch(events: SchedulerEvent[]): void;
}
