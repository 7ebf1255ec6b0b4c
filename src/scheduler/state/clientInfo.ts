import type { ClientRecipient } from "../../protocol/messages.ts";
import type { TaskState } from "./taskState.ts";

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

  /** A client that wants nothing yet. */
  constructor(id: string) {
    this.id = id;
    this.recipient = { kind: "client", id };
  }

  /** `<ClientInfo 'id'>`. */
  toString(): string {
    return `<ClientInfo '${this.id}'>`;
  }
}
