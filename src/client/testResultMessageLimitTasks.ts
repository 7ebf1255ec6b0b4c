/**
 * A task module for `resultMessageLimit.test.ts` and
 * `worker/peerMessageLimit.test.ts`: a task whose client (on a worker's pool
 * thread when the worker runs tasks on threads) fetches a result computed on
 * another worker, one taking several byte arrays, and an actor answering
 * with byte arrays of any size.
 */

import { defineTask } from "../worker/taskRegistry.ts";
import { workerClient } from "./taskClient.ts";
import { bytes } from "./testTasks.ts";

/** What {@link fetchesBytes} saw. */
export interface FetchSeen {
  /** The length of the result fetched, or null if the fetch failed. */
  readonly length: number | null;
  /** The fetch's error (`name: message`), or null. */
  readonly error: string | null;
}

/** Compute `bytes(n)` on the worker `holder`, then fetch it with the task's client. */
export const fetchesBytes = defineTask(
  "fetchesBytes",
  async (holder: string, n: number): Promise<FetchSeen> =>
    await workerClient(async (client) => {
      const f = client.submitWith({ workers: [holder] }, bytes, n);
      return await f.result().then(
        (v) => ({ length: v.length, error: null }),
        (e: unknown) => ({
          length: null,
          error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
        }),
      );
    }),
);

/** The lengths of byte arrays (inputs too large together to travel in one message). */
export const byteLengths = defineTask("byteLengths", (xs: readonly Uint8Array[]) =>
  xs.map((x) => x.length),
);

/** An actor's class whose method and field answer with byte arrays of any size. */
export class ByteStore {
  /** A byte array of the size given at creation. */
  readonly held: Uint8Array;
  constructor(n: number) {
    this.held = new Uint8Array(n);
  }
  /** A byte array of `n` bytes. */
  bytes(n: number): Uint8Array {
    return new Uint8Array(n);
  }
}

/** Makes a {@link ByteStore} holding `n` bytes: submitted with `{ actor: true }`, an actor. */
export const byteStore = defineTask("byteStore", (n: number) => new ByteStore(n));
