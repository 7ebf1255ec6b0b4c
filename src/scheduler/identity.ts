/**
 * The scheduler's `identity` (Dask's `Server.identity`): what answers at an
 * address, asked as a connection's first message in place of registering, with
 * no side effect. `weft scheduler --scheduler-file` asks it of the address a file
 * names, to tell the scheduler the file names (its `id`) from another program that
 * accepts connections on that port.
 */

import type { Comm } from "../comm/comm.ts";

/** The answer to `identity`. */
export interface SchedulerIdentity {
  /** Always `"Scheduler"`, as in Dask's identity. */
  readonly type: "Scheduler";
  /** The scheduler's ID (`Scheduler-<uuid>`), the one its scheduler file holds. */
  readonly id: string;
  /** The address it listens on. */
  readonly address: string;
  /** The HTTP endpoints' port, if served (as a scheduler file's `services`). */
  readonly services: Readonly<Record<string, number>>;
}

/**
 * Answer the `identity` request `request` (`{op: "identity", id}`, an rpc's
 * request: the answer is `{id, result}`), then close the connection: it is
 * a question, not a session.
 */
export async function answerIdentity(
  comm: Comm,
  request: { readonly id?: unknown },
  identity: SchedulerIdentity,
): Promise<void> {
  const id = Number.isSafeInteger(request.id) ? request.id : null;
  try {
    await comm.send({ id, result: identity });
    await comm.close();
  } catch {
    comm.abort(); // the asker gone already: nothing to tell it
  }
}
