/**
 * `Client.runOnScheduler` (Dask's `run_on_scheduler`): a task function run in
 * the scheduler's process, outside any graph; the scheduler's side is
 * `scheduler/schedulerCode.ts`.
 */

import { ClonedValue } from "../comm/clonedValue.ts";
import { RunError } from "./errors.ts";

/** `fn(...args)`'s answer from the scheduler at `address`: its value, or a {@link RunError} to throw. */
export function runOutcome(address: string, response: unknown): unknown {
  const r = response as { status?: unknown; value?: unknown; error?: unknown } | null;
  if (r?.status === "OK") return ClonedValue.unwrap(r.value);
  const e = r?.error as { exceptionText?: unknown; tracebackText?: unknown } | undefined;
  if (r?.status === "error" && typeof e?.exceptionText === "string") {
    throw new RunError(
      address,
      e.exceptionText,
      typeof e.tracebackText === "string" ? e.tracebackText : "",
    );
  }
  throw new RunError(
    address,
    `malformed answer to run-on-scheduler: ${String(JSON.stringify(response))}`,
  );
}

/** The arguments of a run, wrapped to travel as they are (structured clone). */
export function runArgs(args: readonly unknown[]): ClonedValue[] {
  return args.map((a) => new ClonedValue(a));
}
