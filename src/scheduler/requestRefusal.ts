/**
 * A well-formed request of a client that the scheduler refuses for what it
 * asks, not for its shape: metadata set below a value, a plugin unregistered
 * that nobody registered, another file uploaded under a name taken. The
 * user's mistake, answered to the client who made it (a `SchedulerReplyError`
 * there), not a malformed message for the scheduler's error log and its
 * `rejectedMessages` count, which say that something is broken.
 */
export class RequestRefusal extends Error {
  override name = "RequestRefusal";
}
