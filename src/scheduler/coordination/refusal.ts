import { RequestRefusal } from "../requestRefusal.ts";

/**
 * A well-formed coordination request the primitive's state refuses: a
 * queue asked for with another `maxsize` than it has, a semaphore with
 * another `maxLeases`, a lease released that is not held (released twice)
 * or acquired while held. The user's mistake, answered to the client who made
 * it, not a malformed message for the scheduler's log.
 */
export class CoordinationRefusal extends RequestRefusal {
  override name = "CoordinationRefusal";
}
