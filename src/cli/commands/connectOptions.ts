/**
 * The options and argument of the commands that connect to a running scheduler
 * as a client (`weft status`, `weft retire`...), as their definitions add them;
 * withClient.ts connects with them.
 */

import type { Command } from "commander";
import { MILLISECONDS_FORMS } from "./millisecondsOption.ts";
import {
  SCHEDULER_ARGUMENT,
  SCHEDULER_FILE_OPTION,
  type SchedulerFileCliOptions,
} from "./schedulerChoice.ts";
import { schedulerFilePath } from "./schedulerFilePath.ts";
import {
  addFrameLimitOptions,
  addTlsOptions,
  type FrameLimitCliOptions,
  type TlsCliOptions,
} from "./serverOptions.ts";

/** Options of the commands that connect to a scheduler as a client. */
export interface ConnectCliOptions
  extends TlsCliOptions,
    FrameLimitCliOptions,
    SchedulerFileCliOptions {
  readonly connectTimeout?: string;
}

/**
 * Add the options of {@link ConnectCliOptions} (`--scheduler-file`,
 * `--connect-timeout`, TLS, the frame limits) to `cmd`. The frame limits are the
 * cluster's, as `weft run --scheduler` takes them: a command with the defaults
 * could not talk to a cluster run with a `--max-frame-bytes` of its own (its
 * upload's frame closed the connection, a reply's frame was refused).
 */
export function addConnectOptions(cmd: Command): Command {
  return addTlsOptions(
    addFrameLimitOptions(
      cmd
        .option("--scheduler-file <path>", SCHEDULER_FILE_OPTION, schedulerFilePath)
        .option(
          "--connect-timeout <ms|duration>",
          `how long to wait for the scheduler to accept the connection (${MILLISECONDS_FORMS}; default: 10000)`,
        ),
    ),
  );
}

/** The scheduler argument of a command that connects to a running scheduler. */
export function addSchedulerArgument(cmd: Command): Command {
  return cmd.argument("[scheduler]", SCHEDULER_ARGUMENT);
}
