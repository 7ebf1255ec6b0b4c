import type { Command } from "commander";
import type { CliContext } from "./context.ts";

/** Builds one subcommand of `weft`, writing through `ctx`. */
export type CommandFactory = (ctx: CliContext) => Command;

/**
 * One subcommand of `weft`: its name, and its module, imported only when the
 * command is run or listed. Imported together, the commands' modules (the
 * worker, the scheduler, the client, the simulator...) took most of the start
 * of every `weft` process, whichever command it ran.
 */
export interface CommandEntry {
  /** The command's name, as its factory gives it (a test checks that they agree). */
  readonly name: string;
  /** Imports the command's module. */
  readonly load: () => Promise<CommandFactory>;
}

/**
 * The subcommands of `weft`, in the order `weft --help` lists them. To add one, write
 * `src/cli/commands/<name>.ts` exporting a {@link CommandFactory} and list it here.
 */
export const COMMANDS: readonly CommandEntry[] = [
  { name: "run", load: async () => (await import("./run.ts")).runCommand },
  { name: "scheduler", load: async () => (await import("./scheduler.ts")).schedulerCommand },
  { name: "worker", load: async () => (await import("./worker.ts")).workerCommand },
  { name: "status", load: async () => (await import("./status.ts")).statusCommand },
  { name: "retire", load: async () => (await import("./retire.ts")).retireCommand },
  { name: "restart", load: async () => (await import("./restart.ts")).restartCommand },
  { name: "shutdown", load: async () => (await import("./shutdown.ts")).shutdownCommand },
  { name: "amm", load: async () => (await import("./amm.ts")).ammCommand },
  { name: "upload", load: async () => (await import("./upload.ts")).uploadCommand },
  { name: "logs", load: async () => (await import("./logs.ts")).logsCommand },
  { name: "events", load: async () => (await import("./events.ts")).eventsCommand },
  { name: "profile", load: async () => (await import("./profile.ts")).profileCommand },
  { name: "dump", load: async () => (await import("./dump.ts")).dumpCommand },
  { name: "replay", load: async () => (await import("./replay.ts")).replayCommand },
  { name: "story", load: async () => (await import("./story.ts")).storyCommand },
  { name: "sim", load: async () => (await import("./sim.ts")).simCommand },
  { name: "bench", load: async () => (await import("./bench.ts")).benchCommand },
];
