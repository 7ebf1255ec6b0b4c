import type { Command } from "commander";
import type { CliContext } from "./context.ts";

/** Builds one subcommand of `weft`, writing through `ctx`. */
export type CommandFactory = (ctx: CliContext) => Command;

/**
 * One subcommand of `weft`: what `weft --help` lists of it, and its module,
 * imported only when the command is run or its own help is asked for. Imported
 * together, the commands' modules (the worker, the scheduler, the client, the
 * simulator...) took most of the start of every `weft` process, whichever command
 * it ran, and of the help that only lists them.
 */
export interface CommandEntry {
  /** The command's name, as its factory gives it (a test checks that they agree). */
  readonly name: string;
  /** Its usage after the name (`[options] <file>`), as its factory's `usage()` gives it. */
  readonly usage: string;
  /** Its description, which its factory takes from here ({@link commandDescription}). */
  readonly description: string;
  /** Imports the command's module. */
  readonly load: () => Promise<CommandFactory>;
}

/**
 * The subcommands of `weft`, in the order `weft --help` lists them. To add one, write
 * `src/cli/commands/<name>.ts` exporting a {@link CommandFactory} whose action imports
 * what it runs (`<name>Action.ts`; src/cli/commandLoading.test.ts checks that its help
 * does not), and list it here with its description (which the factory takes through
 * {@link commandDescription}) and the usage its factory gives (src/cli/weft.test.ts
 * checks both).
 */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: "run",
    usage: "[options] <file>",
    description: "Compute a task graph on an embedded local cluster, or on a running scheduler",
    load: async () => (await import("./run.ts")).runCommand,
  },
  {
    name: "scheduler",
    usage: "[options]",
    description: "Run a scheduler that workers and clients connect to (TCP mode, many machines)",
    load: async () => (await import("./scheduler.ts")).schedulerCommand,
  },
  {
    name: "worker",
    usage: "[options] [scheduler]",
    description: "Run a worker for a scheduler (TCP mode, many machines)",
    load: async () => (await import("./worker.ts")).workerCommand,
  },
  {
    name: "status",
    usage: "[options] [scheduler]",
    description: "What a running scheduler has: its workers, counters and datasets",
    load: async () => (await import("./status.ts")).statusCommand,
  },
  {
    name: "retire",
    usage: "[options] [scheduler] [workers...]",
    description:
      "Take workers out of a running cluster without losing their results; each retired worker closes",
    load: async () => (await import("./retire.ts")).retireCommand,
  },
  {
    name: "restart",
    usage: "[options] [scheduler] [workers...]",
    description:
      "Restart a running cluster: forget every task, cancel every client's futures, start the workers afresh",
    load: async () => (await import("./restart.ts")).restartCommand,
  },
  {
    name: "shutdown",
    usage: "[options] [scheduler]",
    description: "Close a running cluster: every worker, then the scheduler",
    load: async () => (await import("./shutdown.ts")).shutdownCommand,
  },
  {
    name: "amm",
    usage: "[options] [command]",
    description:
      "Operate a running scheduler's active memory manager (ReduceReplicas): start, stop, status, run-once",
    load: async () => (await import("./amm.ts")).ammCommand,
  },
  {
    name: "upload",
    usage: "[options] [scheduler] [files...]",
    description:
      "Send files to every worker of a running cluster, which saves them and imports the task modules among them",
    load: async () => (await import("./upload.ts")).uploadCommand,
  },
  {
    name: "logs",
    usage: "[options] [scheduler]",
    description:
      "Print the last records the scheduler and its workers logged, merged by time (Dask's get_worker_logs)",
    load: async () => (await import("./logs.ts")).logsCommand,
  },
  {
    name: "events",
    usage: "[options] [scheduler]",
    description:
      "Print the structured events a running scheduler keeps, by time (Dask's get_events); --follow prints them as they come",
    load: async () => (await import("./events.ts")).eventsCommand,
  },
  {
    name: "profile",
    usage: "[options] [scheduler]",
    description:
      "Profile the CPU of a running cluster's workers for some seconds: a .cpuprofile, and where the time went",
    load: async () => (await import("./profile.ts")).profileCommand,
  },
  {
    name: "dump",
    usage: "[options] [scheduler]",
    description:
      "Write the cluster's state to a file, as Dask's dump_cluster_state: for weft replay and weft story",
    load: async () => (await import("./dump.ts")).dumpCommand,
  },
  {
    name: "replay",
    usage: "[options] <file>",
    description:
      "Replay a Dask cluster dump, a conformance vector or a stimulus stream on the worker state machine and report where it differs",
    load: async () => (await import("./replay.ts")).replayCommand,
  },
  {
    name: "story",
    usage: "[options] <key...> <file|scheduler>",
    description:
      "The story of tasks (or stimulus ids) across the scheduler and every worker, in time order: of a cluster dump, or of a running cluster",
    load: async () => (await import("./story.ts")).storyCommand,
  },
  {
    name: "sim",
    usage: "[options]",
    description:
      "Run deterministic simulated clusters (scheduler, workers, client on virtual time) with faults, and check that nothing deadlocks, nothing is lost and every answer is right",
    load: async () => (await import("./sim.ts")).simCommand,
  },
  {
    name: "bench",
    usage: "[options] [command]",
    description:
      "Benchmark this machine: the worker state machine on recorded streams (state), whole local clusters (cluster); JSON lines",
    load: async () => (await import("./bench.ts")).benchCommand,
  },
];

/**
 * The description of the command `name`, as its entry gives it: its definition takes
 * it from here, so that `weft --help`, which lists the entries, and `weft name --help`
 * say the same.
 */
export function commandDescription(name: string): string {
  const entry = COMMANDS.find((c) => c.name === name);
  if (entry === undefined) throw new Error(`no weft command ${name} in COMMANDS`);
  return entry.description;
}
