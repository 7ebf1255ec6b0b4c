/** Test helper: a listener and a connected pair of comms over a transport. */

import type { Comm, Listener, ListenOptions } from "./comm.ts";
import { connect, listen } from "./connect.ts";

/** A listener, the dialling end and the accepted end. */
export interface CommPair {
  listener: Listener;
  client: Comm;
  server: Comm;
}

/** Listen at `address` (e.g. `inproc://`, `tcp://127.0.0.1:0`) and connect once. */
export async function commPair(address: string, options: ListenOptions = {}): Promise<CommPair> {
  let accepted!: (c: Comm) => void;
  const serverP = new Promise<Comm>((resolve) => {
    accepted = resolve;
  });
  const listener = await listen(address, (c) => accepted(c), options);
  // The dialling end takes the same comm options; the listener's own stay with it.
  const { forwardOutOfBandBuffers: _, onRefusedPeer: __, ...commOptions } = options;
  const client = await connect(listener.address, commOptions);
  const server = await serverP;
  return { listener, client, server };
}

/** What iterating `comm` throws; null if the iteration ends (an orderly close). */
export async function iterationError(comm: Comm): Promise<unknown> {
  try {
    for await (const _ of comm) {
      // drain
    }
  } catch (err) {
    return err;
  }
  return null;
}
