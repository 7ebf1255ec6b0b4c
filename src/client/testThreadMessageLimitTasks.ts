/**
 * A task module for `threadMessageLimit.test.ts`: a task whose client (on a
 * worker's pool thread when the worker runs tasks on threads) submits an
 * argument larger than the scheduler takes, then a small task.
 */

import { MessageTooLargeError } from "../comm/errors.ts";
import { defineTask } from "../worker/taskRegistry.ts";
import { workerClient } from "./taskClient.ts";
import { identity, inc } from "./testTasks.ts";

/** What {@link submitsTooMuch} saw. */
export interface TooMuchSeen {
  /** The error of the large submit (`name: message`), or null if it did not fail. */
  readonly error: string | null;
  /** The limit of the `MessageTooLargeError`, or null for another error. */
  readonly limit: number | null;
  /** The task's client closed after the large submit. */
  readonly clientClosed: boolean;
  /** `inc(41)`, submitted by the same client after the large submit. */
  readonly after: number;
}

/** Submit `identity` of a string of `bytes` characters, then `inc(41)`, with the task's client. */
export const submitsTooMuch = defineTask(
  "submitsTooMuch",
  async (bytes: number): Promise<TooMuchSeen> =>
    await workerClient(async (client) => {
      const err = await client.submit(identity, "x".repeat(bytes)).then(
        () => null,
        (e: unknown) => e,
      );
      const clientClosed = client.isClosed;
      return {
        error:
          err instanceof Error ? `${err.name}: ${err.message}` : err === null ? null : String(err),
        limit: err instanceof MessageTooLargeError ? err.limit : null,
        clientClosed,
        after: await client.submit(inc, 41),
      };
    }),
);

/** What {@link asksTooMuch} saw. */
export interface TooMuchAsked {
  /** The error of the large request (`name: message`), or null if it did not fail. */
  readonly error: string | null;
  /** The task's client's id, which the error names. */
  readonly clientId: string;
  /** The task's client closed after the large request. */
  readonly clientClosed: boolean;
  /** The metadata under `small`, asked by the same client after the large request. */
  readonly after: unknown;
}

/**
 * With the task's client, read the metadata under `big` (larger than the
 * client takes), then that under `small`.
 */
export const asksTooMuch = defineTask(
  "asksTooMuch",
  async (): Promise<TooMuchAsked> =>
    await workerClient(async (client) => {
      const err = await client.getMetadata("big").then(
        () => null,
        (e: unknown) => e,
      );
      return {
        error:
          err instanceof Error ? `${err.name}: ${err.message}` : err === null ? null : String(err),
        clientId: client.id,
        clientClosed: client.isClosed,
        after: await client.getMetadata("small"),
      };
    }),
);
