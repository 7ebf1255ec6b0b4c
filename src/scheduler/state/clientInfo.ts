import type { ClientRecipient } from "../../protocol/messages.ts";
import type { TaskState } from "./taskState.ts";

/** The id of the stand-in client of `fire-and-forget`. */
export const FIRE_AND_FORGET_CLIENT = "fire-and-forget";

/** The prefix of the id of the stand-in client holding a published dataset's keys (as Dask's). */
export const DATASET_CLIENT_PREFIX = "published-";

/** True if `id` is that of a stand-in client, which no connected client may take. */
export function isStandInClientId(id: string): boolean {
  return id === FIRE_AND_FORGET_CLIENT || id.startsWith(DATASET_CLIENT_PREFIX);
}

/**
 * The scheduler's bookkeeping for one client (Dask's `ClientState`): the
 * tasks whose results it wants.
 */
export class ClientInfo {
  /** The client's id. */
  readonly id: string;
  /** Tasks it wants; mirrors `TaskState.whoWants`. */
  readonly wantsWhat: Set<TaskState> = new Set();
  /** The envelope address for messages to this client, shared by all of them. */
  readonly recipient: ClientRecipient;
  /** The last `submission` of its requests handled (0: none said). */
  lastSubmission = 0;
  /**
   * A stand-in with no connection, which holds keys on behalf of no one in
   * particular (`fire-and-forget`, or a published dataset, as in Dask): it is
   * sent nothing, and it never closes.
   */
  readonly standIn: boolean;

  /** A client that wants nothing yet. */
  constructor(id: string, standIn = false) {
    this.id = id;
    this.recipient = { kind: "client", id };
    this.standIn = standIn;
  }

  /** `<ClientInfo 'id'>`. */
  toString(): string {
    return `<ClientInfo '${this.id}'>`;
  }
}
