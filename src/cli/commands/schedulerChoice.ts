/**
 * Which scheduler a command talks to: the address given as an argument, or the
 * one in a scheduler file (`--scheduler-file`, as `weft scheduler
 * --scheduler-file` writes it: Dask's), exactly one of the two. On a batch
 * system the job script knows the file, not the address.
 */

import { readSchedulerFile } from "../../util/schedulerFile.ts";
import { checkInprocScheduler } from "./inprocScheduler.ts";

/** The `--scheduler-file` option of the commands that connect to a running scheduler. */
export interface SchedulerFileCliOptions {
  readonly schedulerFile?: string;
}

/** The help of a command's scheduler argument, which `--scheduler-file` replaces. */
export const SCHEDULER_ARGUMENT =
  "the scheduler's address (tcp://host:port or tls://host:port); left out with --scheduler-file";

/** The help of `--scheduler-file`. */
export const SCHEDULER_FILE_OPTION =
  "read the scheduler's address from this file (weft scheduler --scheduler-file writes it), waiting up to --connect-timeout for it to appear, then reading it again while the scheduler it names refuses connections, up to --connect-timeout; in place of the address";

/**
 * What the command `command` says on stderr, at once, when its
 * `--scheduler-file` is not there yet and is waited for up to `timeoutMs`:
 * a user may have mistyped the path, or started the scheduler without it.
 */
export function waitingForFileLine(command: string, path: string, timeoutMs: number): string {
  return `weft ${command}: waiting for the scheduler file ${path} (not there yet); giving up after ${timeoutMs / 1000} s\n`;
}

/**
 * What the command `command` says on stderr, at once, when the scheduler at
 * `address` cannot be reached yet (`reason`: refused, not resolving, …) and is
 * waited for up to `timeoutMs`: started together with it, or a wrong address.
 */
export function waitingForSchedulerLine(
  command: string,
  address: string,
  reason: string,
  timeoutMs: number,
): string {
  return `weft ${command}: waiting for the scheduler at ${address} (${reason}); giving up after ${timeoutMs / 1000} s\n`;
}

/**
 * Why the scheduler's address `given` as an argument and `schedulerFile` do not
 * name one scheduler (neither given, or both), or null when exactly one is.
 */
export function schedulerChoiceProblem(
  given: string | undefined,
  schedulerFile: string | undefined,
): string | null {
  if ((given === undefined) !== (schedulerFile === undefined)) return null;
  return `give the scheduler's address or --scheduler-file, ${given === undefined ? "neither was given" : "not both"}`;
}

/**
 * A scheduler named on the command line: the address, if given as an argument,
 * and the command's other arguments (workers, files, keys), none of which may be
 * the address a `--scheduler-file` gives (given twice).
 */
export interface SchedulerArgument {
  readonly given: string | undefined;
  readonly others?: readonly string[];
}

/**
 * The arguments of `weft COMMAND [scheduler] [more...]`: without `--scheduler-file`
 * the first is the scheduler's address; with it, every one is one of the others.
 */
export function leadingScheduler(
  args: readonly string[],
  schedulerFile: string | undefined,
): { readonly given: string | undefined; readonly others: readonly string[] } {
  return schedulerFile === undefined
    ? { given: args[0], others: args.slice(1) }
    : { given: undefined, others: args };
}

/** `address` without the default scheme, so that `host:port` and `tcp://host:port` compare equal. */
const withoutTcp = (address: string): string => address.replace(/^tcp:\/\//, "");

/**
 * Throws the choice's problem (given twice) when `address`, the one a scheduler file
 * gave, is also among the command's other arguments.
 */
export function checkNotGivenTwice(
  scheduler: SchedulerArgument,
  schedulerFile: string | undefined,
  address: string,
): void {
  if ((scheduler.others ?? []).some((arg) => withoutTcp(arg) === withoutTcp(address))) {
    throw new Error(schedulerChoiceProblem(address, schedulerFile) as string);
  }
}

/**
 * The address of the scheduler `scheduler` names: the one given, or the one in
 * the file `schedulerFile`, waited for up to `timeoutMs` (`onWaitingForFile`
 * is called at once if it is not there yet: the command says that it waits).
 * Throws an Error whose message is for the user when neither or both are given
 * (an argument that is the file's address counts as given), or the file is
 * missing or not a scheduler file.
 */
export async function schedulerAddress(
  scheduler: SchedulerArgument,
  schedulerFile: string | undefined,
  timeoutMs: number,
  onWaitingForFile?: (path: string) => void,
): Promise<string> {
  const problem = schedulerChoiceProblem(scheduler.given, schedulerFile);
  if (problem !== null) throw new Error(problem);
  if (scheduler.given !== undefined) {
    checkInprocScheduler(scheduler.given);
    return scheduler.given;
  }
  const path = schedulerFile as string;
  const address = await readSchedulerFile(path, {
    timeoutMs,
    onWaiting: () => onWaitingForFile?.(path),
  });
  checkNotGivenTwice(scheduler, schedulerFile, address);
  return address;
}
