/**
 * `weft events <scheduler>`: the structured events the scheduler keeps
 * (Dask's `get_events`), merged by time, and with `--follow` those logged
 * from then on (`subscribe_topic`), until Ctrl-C.
 */

import { Command } from "commander";
import { addConnectOptions, addSchedulerArgument } from "./connectOptions.ts";
import type { CliContext } from "./context.ts";
import type { EventsCliOptions } from "./eventsAction.ts";
import { commandDescription } from "./index.ts";

/** `weft events`: see docs/client.md. */
export function eventsCommand(ctx: CliContext): Command {
  return addConnectOptions(addSchedulerArgument(new Command("events")))
    .description(commandDescription("events"))
    .option(
      "--topic <topic>",
      "only this topic (repeatable); the scheduler's own are under all and each worker's address",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option(
      "--follow",
      "with --topic: after the events kept, print those logged, until Ctrl-C (SIGINT) or SIGTERM",
    )
    .option("--json", "one JSON object a line: {topic, time, msg}")
    .addHelpText(
      "after",
      "\nEach line: the time (UTC), the topic, the message as JSON. Clients and tasks log\n" +
        "events with client.logEvent(topic, msg); the scheduler keeps the last 100,000 of\n" +
        "each topic. Exit code: 0; 1 if there are no events (without --follow) or the\n" +
        "scheduler is lost while following; 2 for bad usage or a scheduler that cannot be\n" +
        "reached; 130 (143) --follow ended by SIGINT (SIGTERM).",
    )
    .action(async (address: string | undefined, opts: EventsCliOptions) => {
      await (await import("./eventsAction.ts")).runEvents(address, opts, ctx);
    });
}
