/**
 * The client's cancels: its `cancel-keys` requests, each answered by a
 * `cancelled-keys` under its stimulus id, and what a `cancelled-keys` does to
 * the client's futures (nothing to those of keys asked for anew after the
 * scheduler sent it, or after the cancel was asked). Apart from the client: the
 * matching of notices to requests and submissions is one concern, needing of
 * the client only its records and submission numbers (see {@link CancelHost}).
 */

import type { CancelKeysMsg, CancelledKeysMsg } from "../protocol/messagesClient.ts";
import { CancelledError, SchedulerReplyError } from "./errors.ts";
import type { KeyRecord } from "./keyRecord.ts";
import type { Requests } from "./requests.ts";
import type { Submissions } from "./submissions.ts";

/** What {@link Cancels} needs of its client. */
export interface CancelHost {
  /** The client's id, in its requests. */
  readonly id: string;
  /** Where a cancel gets a stimulus id no other request has. */
  readonly requests: Pick<Requests, "stimulusId">;
  /** The client's submissions: a cancel concerns the keys asked for up to the last. */
  readonly submissions: Pick<Submissions, "last">;
  /** The record of `key`, if the client holds a future of it. */
  record(key: string): KeyRecord | undefined;
  /** Send `msg` to the scheduler. */
  send(msg: CancelKeysMsg): void;
  /** Keep the process alive until the returned function is called: a cancel's answer is awaited. */
  holdLoop?: () => () => void;
}

/** A client's cancels not answered yet, and the cancel notices of the scheduler. */
export class Cancels {
  /** This client's `cancel-keys` requests not answered yet, by stimulus id. */
  private readonly pending = new Map<
    string,
    {
      readonly keys: readonly string[];
      readonly submission: number;
      readonly resolve: () => void;
      readonly reject: (err: Error) => void;
    }
  >();

  constructor(private readonly host: CancelHost) {}

  /** Ask the scheduler to cancel `keys`; resolves once it has answered. */
  async request(keys: readonly string[], force: boolean): Promise<void> {
    // The answer is matched by stimulus id, which must be this cancel's alone
    // (plain stimulus ids repeat within a millisecond).
    const stimulusId = this.host.requests.stimulusId("cancel");
    const answered = new Promise<void>((resolve, reject) => {
      this.pending.set(stimulusId, {
        keys: [...keys],
        submission: this.host.submissions.last,
        resolve,
        reject,
      });
    });
    this.host.send({
      op: "cancel-keys",
      keys: [...keys],
      clientId: this.host.id,
      force,
      stimulusId,
    });
    const release = this.host.holdLoop?.();
    try {
      await answered;
    } finally {
      release?.();
    }
  }

  /** The scheduler cancelled keys: their futures fail with `CancelledError`. */
  cancelled(msg: CancelledKeysMsg): void {
    // The answer to this client's own cancel covers the keys it asked to
    // cancel too. Neither concerns keys submitted anew after the scheduler
    // sent it (`msg.submission`: the last submission it had handled), nor,
    // for an own cancel, after the request.
    const own = this.pending.get(msg.stimulusId);
    if (own !== undefined) this.pending.delete(msg.stimulusId);
    const handled = typeof msg.submission === "number" ? msg.submission : Number.POSITIVE_INFINITY;
    const cancel = (key: string): void => {
      const rec = this.host.record(key);
      if (rec === undefined || rec.status === "lost") return;
      if (rec.submission > handled) return;
      if (own !== undefined && rec.submission > own.submission) return;
      rec.fail("cancelled", new CancelledError(key, msg.reason));
    };
    for (const key of msg.keys) cancel(key);
    if (own !== undefined) {
      for (const key of own.keys) cancel(key);
      own.resolve();
    }
  }

  /**
   * The scheduler refused the cancel `stimulusId` as malformed, cancelling
   * nothing: it fails with the scheduler's reason (it would wait forever).
   */
  refused(stimulusId: string, why: string): void {
    const own = this.pending.get(stimulusId);
    if (own === undefined) return;
    this.pending.delete(stimulusId);
    own.reject(new SchedulerReplyError("cancel-keys", why, "cancel"));
  }

  /** The client closed: the cancels not answered resolve (their futures are lost now). */
  closed(): void {
    for (const { resolve } of this.pending.values()) resolve();
    this.pending.clear();
  }
}
