/**
 * What the worker's main thread and its pool threads say to each other.
 * Jobs and replies go through piscina; `secede`/`rejoin` go through a
 * `BroadcastChannel` named per worker, because a task may call them while its
 * job is still running.
 */

import type { ExecuteOutcome } from "./executor.ts";

/** `workerData` of a pool thread. */
export interface ThreadInit {
  /** Name of the worker's BroadcastChannel. */
  readonly channel: string;
  /** File URLs of the task modules to import. */
  readonly taskModules: readonly string[];
  /** The worker's scheduler, which a task's client (`getClient()`) connects to; null: none. */
  readonly scheduler: string | null;
  /** How long a task's client waits for a connection, in ms. */
  readonly connectTimeoutMs: number;
}

/** A job for a pool thread. */
export type ThreadJob =
  | {
      readonly kind: "ping";
      /** Task modules loaded since the pool started: the thread imports those it has not. */
      readonly loaded: readonly string[];
    }
  /** Collect this thread's garbage (the worker is short of memory). */
  | { readonly kind: "gc" }
  | {
      readonly kind: "run";
      /** As a ping's: the thread imports first those it has not. */
      readonly loaded: readonly string[];
      /** Identifies this run in channel messages. */
      readonly token: number;
      readonly key: string;
      readonly fn: string;
      /** The arguments, `v8.serialize`d on the main thread. */
      readonly args: Uint8Array;
      /** Some arguments are `ActorRef`s, to be made handles (see `ExecuteJob`). */
      readonly hasActors: boolean;
      /** As `ExecuteJob`'s: how errors name the job. */
      readonly label?: string;
    };

/** A pool thread's answer: to a ping, the functions it knows; to a gc, whether it could; to a run, the outcome (an ok value `v8.serialize`d). */
export type ThreadReply =
  | { readonly kind: "pong"; readonly tasks: readonly string[]; readonly threadId: number }
  | { readonly kind: "collected"; readonly collected: boolean; readonly threadId: number }
  | { readonly kind: "done"; readonly outcome: ExecuteOutcome };

/**
 * Channel messages: thread → main `secede`/`rejoin`, and `client` (the task asked
 * for the thread's client: it may wait for other tasks), main → thread `rejoined`.
 */
export type ChannelMessage =
  | { readonly t: "secede"; readonly token: number; readonly after: number }
  | { readonly t: "rejoin"; readonly token: number }
  | { readonly t: "client"; readonly token: number }
  | { readonly t: "rejoined"; readonly token: number };

/** True if `m` is a well-formed {@link ChannelMessage}. */
export function isChannelMessage(m: unknown): m is ChannelMessage {
  if (typeof m !== "object" || m === null) return false;
  const { t, token } = m as { t?: unknown; token?: unknown };
  if (typeof token !== "number") return false;
  if (t === "secede") return typeof (m as { after?: unknown }).after === "number";
  return t === "rejoin" || t === "rejoined" || t === "client";
}
