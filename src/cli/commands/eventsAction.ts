/**
 * What `weft events` does once its command line is parsed: events.ts, its definition,
 * imports this module only then, so that `weft events --help` loads none of it.
 */

import { constants } from "node:os";
import type { Client } from "../../client/client.ts";
import type { ClusterEvent } from "../../client/events.ts";
import { formatEpochSeconds } from "../../replay/formatTime.ts";
import { inTimeOrder } from "../../util/timeOrder.ts";
import type { ConnectCliOptions } from "./connectOptions.ts";
import { type CliContext, EXIT } from "./context.ts";
import { untilSignal } from "./serveUntil.ts";
import { withClient } from "./withClient.ts";

/** Options of `weft events`. */
export interface EventsCliOptions extends ConnectCliOptions {
  /** `--topic T` (repeatable): only these topics. */
  readonly topic?: readonly string[];
  readonly follow?: boolean;
  readonly json?: boolean;
}

/** One event as a line: time (UTC), topic, message as JSON. */
export function formatEventLine(topic: string, [time, msg]: ClusterEvent): string {
  return `${formatEpochSeconds(time)}  ${topic}  ${JSON.stringify(msg) ?? String(msg)}`;
}

/** The events of `topics` (every topic without), oldest first; one topic's own order kept. */
async function eventsOf(
  client: Client,
  topics: readonly string[],
): Promise<{ topic: string; event: ClusterEvent }[]> {
  const byTopic: Record<string, ClusterEvent[]> =
    topics.length === 0 ? await client.getEvents() : {};
  for (const t of topics) byTopic[t] = await client.getEvents(t);
  const all = Object.entries(byTopic).flatMap(([topic, events]) =>
    events.map((event) => ({ topic, event })),
  );
  return inTimeOrder(all, (e) => e.event[0]);
}

/**
 * `weft events [ADDRESS]` (the address, or `--scheduler-file`); with `--follow`, the events as they come until
 * `stop(over)` resolves with the name of the signal that stopped it (SIGINT or
 * SIGTERM from the command line), or null once `over` resolves: the follow is over.
 */
export async function runEvents(
  address: string | undefined,
  opts: EventsCliOptions,
  ctx: CliContext,
  stop: (over: Promise<void>) => Promise<string | null> = untilSignal,
): Promise<void> {
  const topics = opts.topic ?? [];
  if (opts.follow === true && topics.length === 0) {
    ctx.stderr.write(
      "weft events: --follow needs --topic (the topics to follow; all: the scheduler's own)\n",
    );
    ctx.exitCode = EXIT.usage;
    return;
  }
  const print = (topic: string, event: ClusterEvent) =>
    ctx.stdout.write(
      opts.json === true
        ? `${JSON.stringify({ topic, time: event[0], msg: event[1] })}\n`
        : `${formatEventLine(topic, event)}\n`,
    );
  await withClient("events", { given: address }, opts, ctx, async (client) => {
    if (opts.follow === true) {
      // Subscribed first, so that no event falls between the backlog and the stream;
      // one logged in between is printed twice at worst, never lost.
      const early: { topic: string; event: ClusterEvent }[] = [];
      let live = false;
      for (const topic of topics) {
        await client.subscribeTopic(topic, (event) => {
          if (live) print(topic, event);
          else early.push({ topic, event });
        });
      }
      const backlog = await eventsOf(client, topics);
      // Each topic's backlog is fetched in turn: an event of the first logged while
      // the second's was fetched is in no backlog, and comes early. Early events are
      // those after their own topic's backlog (one cutoff for all lost such events).
      const lastOf = new Map<string, number>();
      for (const e of backlog) lastOf.set(e.topic, e.event[0]);
      const after = early.filter((e) => e.event[0] > (lastOf.get(e.topic) ?? 0));
      for (const e of inTimeOrder([...backlog, ...after], (x) => x.event[0])) {
        print(e.topic, e.event);
      }
      live = true;
      // Listened for only now: a Ctrl-C while connecting ends the process as usual.
      let over!: () => void;
      const ended = await Promise.race([
        stop(new Promise<void>((resolve) => (over = resolve))).then((signal) => ({ signal })),
        client.closed.then((lost) => ({ lost })),
      ]);
      over();
      if ("lost" in ended) {
        ctx.stderr.write(`weft events: ${ended.lost.message}\n`);
        ctx.exitCode = EXIT.differences;
      } else if (ended.signal !== null) {
        // Stopped by the user as weft run and weft profile are: 130 for SIGINT, 143 for SIGTERM.
        ctx.exitCode = 128 + (constants.signals[ended.signal as NodeJS.Signals] ?? 0);
      }
      return;
    }
    const events = await eventsOf(client, topics);
    for (const e of events) print(e.topic, e.event);
    if (events.length === 0) {
      ctx.stderr.write(
        `weft events: no events${topics.length > 0 ? ` under ${topics.join(", ")}` : ""}\n`,
      );
      ctx.exitCode = EXIT.differences;
    }
  });
}
