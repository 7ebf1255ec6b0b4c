/** The scheduler server around `SchedulerState` (in `./state/`). */

export { Counters } from "./counters.ts";
export { Scheduler, type SchedulerStatus } from "./scheduler.ts";
export {
  type ResolvedSchedulerOptions,
  resolveSchedulerOptions,
  type SchedulerOptions,
} from "./schedulerOptions.ts";
