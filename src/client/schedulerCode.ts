/**
 * `Client.runOnScheduler` (Dask's `run_on_scheduler`): a task function run in
 * the scheduler's process, outside any graph; the scheduler's side is
 * `scheduler/schedulerCode.ts`.
 */

import { ClonedValue } from "../comm/clonedValue.ts";
import { RunError } from "./errors.ts";
import { runAnswer } from "./runOnWorkers.ts";

/** `fn(...args)`'s answer from the scheduler at `address`: its value; throws the {@link RunError} it carries. */
export function runOutcome(address: string, response: unknown): unknown {
  const answer = runAnswer(address, response, "run-on-scheduler");
  if (answer instanceof RunError) throw answer;
  return answer;
}

/** The arguments of a run, wrapped to travel as they are (structured clone). */
export function runArgs(args: readonly unknown[]): ClonedValue[] {
  return args.map((a) => new ClonedValue(a));
}
