/**
 * The client's submissions (its `update-graph` messages): their numbers, which
 * the scheduler's cancel notices carry so that a notice predating a new ask of
 * a key is told apart, the futures each makes, and what becomes of its keys
 * when one could not be sent: they go back to the number the scheduler saw,
 * and fail once every ask of them failed. Apart from the client: this
 * bookkeeping is one intricate concern, needing of the client only its records
 * and its connection (see {@link SubmissionHost}).
 */

import type { GraphTask, UpdateGraphMsg } from "../protocol/messagesClient.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { Future, type FutureHost } from "./future.ts";
import type { KeyRecord } from "./keyRecord.ts";

/** How many failed submissions {@link Submissions} remembers (see `failedSubmissions`). */
const MAX_FAILED_SUBMISSIONS = 1000;

/** What {@link Submissions} needs of its client. */
export interface SubmissionHost {
  /** The client's id, in its messages. */
  readonly id: string;
  /** The client as its futures' host. */
  readonly futureHost: FutureHost;
  /** The record of `key`, if the client holds a future of it. */
  record(key: string): KeyRecord | undefined;
  /** Tell the scheduler of the keys released meanwhile, before a submission asks again. */
  flushReleases(): void;
  /** Send `msg` to the scheduler. */
  send(msg: UpdateGraphMsg): void;
}

/** A client's submissions, and what becomes of their keys when one cannot be sent. */
export class Submissions {
  /** Submissions so far (`update-graph` messages sent, and datasets asked for). */
  private count = 0;
  /**
   * Of each `update-graph` sent: the records of the keys it asks for anew, those of
   * keys it asks for again while an earlier ask is not known to have arrived, with
   * the ask's place among them (see `KeyRecord.asks`: a key fails if every ask of it
   * could not be sent), and the submission number each of its keys had before
   * (given back then: the scheduler never sees this one, and compares cancels with
   * what it saw).
   */
  private readonly sentGraphs = new WeakMap<
    object,
    {
      readonly fresh: readonly KeyRecord[];
      readonly reasked: ReadonlyMap<KeyRecord, number> | null;
      readonly before: ReadonlyMap<KeyRecord, number>;
    }
  >();
  /**
   * The `before` numbers of the submissions that could not be sent, by submission
   * (the last {@link MAX_FAILED_SUBMISSIONS}): a later one that fails too gives its
   * keys back past them, to a number the scheduler saw.
   */
  private readonly failedSubmissions = new Map<number, ReadonlyMap<KeyRecord, number>>();

  constructor(private readonly host: SubmissionHost) {}

  /** The number of the last submission. */
  get last(): number {
    return this.count;
  }

  /** The number of a new submission that is no `update-graph` (a dataset asked for). */
  next(): number {
    return ++this.count;
  }

  /**
   * Send `tasks` to the scheduler in an `update-graph` asking for `keys`
   * (after the releases pending): a future of each key.
   */
  submit(tasks: ReadonlyMap<string, GraphTask>, keys: readonly string[]): Future[] {
    this.host.flushReleases();
    const submission = ++this.count;
    // The keys this submission asks for anew (not pending from an earlier one).
    const fresh: KeyRecord[] = [];
    let reasked: Map<KeyRecord, number> | null = null;
    const before = new Map<KeyRecord, number>();
    const futures = keys.map((key) => {
      const known = this.host.record(key);
      let isFresh = known === undefined;
      if (known !== undefined && (known.status === "cancelled" || known.unsent)) {
        // Not (or no longer) asked for from the scheduler: computed afresh.
        known.reset();
        isFresh = true;
      }
      const future = new Future(this.host.futureHost, key);
      // Wanted again from here on, whatever a cancel sent before says of it.
      const rec = this.host.record(key) as KeyRecord;
      if (!before.has(rec)) {
        before.set(rec, rec.submission);
        if (isFresh) {
          rec.asks = 1;
          rec.failedAsks = 0;
          fresh.push(rec);
        } else if (rec.asks > 0) {
          (reasked ??= new Map()).set(rec, rec.asks++);
        }
      }
      rec.submission = submission;
      return future;
    });
    const msg: UpdateGraphMsg = {
      op: "update-graph",
      tasks,
      keys: [...keys],
      clientId: this.host.id,
      stimulusId: newStimulusId("update-graph"),
      submission,
    };
    this.sentGraphs.set(msg, { fresh, reasked, before });
    this.host.send(msg);
    return futures;
  }

  /**
   * `msg` could not be sent to the scheduler, for `err`: if it is a submission,
   * its futures fail with the reason (they would wait forever), and this is true.
   */
  unsent(msg: unknown, err: Error): boolean {
    const sent = typeof msg === "object" && msg !== null ? this.sentGraphs.get(msg) : undefined;
    if (sent === undefined) return false;
    const submission = (msg as UpdateGraphMsg).submission as number;
    const failed = this.failedSubmissions;
    failed.set(submission, sent.before);
    if (failed.size > MAX_FAILED_SUBMISSIONS) failed.delete(failed.keys().next().value as number);
    for (const [rec, number] of sent.before) {
      if (rec.submission !== submission) continue; // a later submission asked again
      let back = number;
      for (let prior = failed.get(back); prior !== undefined; prior = failed.get(back)) {
        back = prior.get(rec) ?? 0;
      }
      rec.submission = back;
    }
    // A key fails once every ask of it failed. Failures are told in the order the
    // messages were sent: one of an earlier ask not told of was sent, and a key
    // asked again later waits for that ask. (Records, not keys: a key released
    // meanwhile and asked for anew is another record.)
    const failAsk = (rec: KeyRecord, index: number): void => {
      if (rec.asks === 0) return; // the scheduler told of it: it has it
      if (rec.failedAsks < index) {
        rec.asks = 0; // an earlier ask was sent
        return;
      }
      if (++rec.failedAsks < rec.asks) return;
      rec.asks = 0;
      if (rec.status !== "pending") return;
      rec.fail("error", err);
      rec.unsent = true;
    };
    for (const rec of sent.fresh) failAsk(rec, 0);
    if (sent.reasked !== null) for (const [rec, index] of sent.reasked) failAsk(rec, index);
    return true;
  }
}
