import type { Command } from "commander";
import { ammCommand } from "./amm.ts";
import { benchCommand } from "./bench.ts";
import type { CliContext } from "./context.ts";
import { dumpCommand } from "./dump.ts";
import { eventsCommand } from "./events.ts";
import { logsCommand } from "./logs.ts";
import { profileCommand } from "./profile.ts";
import { replayCommand } from "./replay.ts";
import { restartCommand } from "./restart.ts";
import { retireCommand } from "./retire.ts";
import { runCommand } from "./run.ts";
import { schedulerCommand } from "./scheduler.ts";
import { shutdownCommand } from "./shutdown.ts";
import { simCommand } from "./sim.ts";
import { statusCommand } from "./status.ts";
import { storyCommand } from "./story.ts";
import { uploadCommand } from "./upload.ts";
import { workerCommand } from "./worker.ts";

/** Builds one subcommand of `weft`, writing through `ctx`. */
export type CommandFactory = (ctx: CliContext) => Command;

/**
 * The subcommands of `weft`, in the order `weft --help` lists them. To add one, write
 * `src/cli/commands/<name>.ts` exporting a {@link CommandFactory} and list it here.
 */
export const COMMANDS: readonly CommandFactory[] = [
  runCommand,
  schedulerCommand,
  workerCommand,
  statusCommand,
  retireCommand,
  restartCommand,
  shutdownCommand,
  ammCommand,
  uploadCommand,
  logsCommand,
  eventsCommand,
  profileCommand,
  dumpCommand,
  replayCommand,
  storyCommand,
  simCommand,
  benchCommand,
];
