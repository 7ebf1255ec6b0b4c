/**
 * The client's submissions (its `update-graph` messages): their numbers, which
 * the scheduler's cancel notices carry so that a notice predating a new ask of
 * a key is told apart, the futures each makes, and what becomes of its keys
 * when one could not be sent or the scheduler refused it as malformed: they go
 * back to the number the scheduler saw, and fail once every ask of them
 * failed. Apart from the client: this bookkeeping is one intricate concern,
 * needing of the client only its records and its connection (see
 * {@link SubmissionHost}).
 */

import type { GraphTask, UpdateGraphMsg } from "../protocol/messagesClient.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { SchedulerReplyError } from "./errors.ts";
import { Future, type FutureHost } from "./future.ts";
import type { KeyRecord } from "./keyRecord.ts";

/** How many failed submissions {@link Submissions} remembers (see `failedSubmissions`). */
const MAX_FAILED_SUBMISSIONS = 1000;

/**
 * Submissions the scheduler may still refuse that are remembered before the
 * first look for those it can no longer fail anything of (see `mayBeRefused`).
 */
const MIN_PRUNE_AT = 64;

/**
 * What a submission sent asked for: the records of the keys it asks for anew,
 * those of keys it asks for again while an earlier ask is not known to have
 * arrived, with the ask's place among them (see `KeyRecord.asks`: a key fails
 * if every ask of it failed), and the submission number each of its keys had
 * before (given back if it fails: the scheduler never took this one, and
 * compares cancels with what it took).
 */
interface SentGraph {
  readonly submission: number;
  /** Its number among the messages sent to the scheduler (see `SubmissionHost.send`). */
  readonly sent: number;
  readonly fresh: readonly KeyRecord[];
  readonly reasked: ReadonlyMap<KeyRecord, number> | null;
  readonly before: ReadonlyMap<KeyRecord, number>;
}

/**
 * True if failing `sent` would still fail a future someone holds: some key of
 * it is still asked for, unheard of from the scheduler, and referenced.
 */
function stillFailable(sent: SentGraph): boolean {
  const open = (rec: KeyRecord) => rec.asks > 0 && rec.refs > 0;
  if (sent.fresh.some(open)) return true;
  if (sent.reasked !== null) for (const rec of sent.reasked.keys()) if (open(rec)) return true;
  return false;
}

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
  /**
   * Send `msg` to the scheduler: its number among the messages sent, as
   * {@link Submissions.handledBefore} is told them.
   */
  send(msg: UpdateGraphMsg): number;
  /**
   * Make a request the scheduler answers at once, for its answer to tell
   * {@link Submissions.handledBefore} that every submission sent before it was
   * handled: asked when many submissions it might still refuse could fail a
   * future held.
   */
  askHandled(): void;
}

/** A client's submissions, and what becomes of their keys when one cannot be sent. */
export class Submissions {
  /** Submissions so far (`update-graph` messages sent, and datasets asked for). */
  private count = 0;
  /** Of each `update-graph` sent, by message: what it asked for, for when it cannot be sent. */
  private readonly sentGraphs = new WeakMap<object, SentGraph>();
  /**
   * The same, by stimulus id, in the order sent, of the submissions the
   * scheduler may still refuse as malformed (`message-refused`, after which
   * nothing else would ever be said of their keys). An entry goes once it is
   * refused, once a later one is (the scheduler takes them in order), once the
   * scheduler answered a request sent after it (see {@link handledBefore}), and,
   * looked for when there are twice as many as after the last look, once
   * failing it would fail no future held: every key of it heard of or released.
   * The look alone bounds nothing while a key stays pending and is asked for
   * again and again (each ask may be the one that fails it): then the scheduler
   * is asked for an answer ({@link SubmissionHost.askHandled}).
   */
  private readonly mayBeRefused = new Map<string, SentGraph>();
  /** The size of {@link mayBeRefused} at which to drop those that can fail nothing. */
  private pruneAt = MIN_PRUNE_AT;
  /** An answer was asked for (`askHandled`) and none came since. */
  private askedHandled = false;
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
      // Unique, unlike a plain stimulus id (the same within a millisecond): a refusal names it.
      stimulusId: `${newStimulusId("update-graph")}-${this.host.id}-${submission}`,
      submission,
    };
    // Sent first: a message that cannot be sent is told of later (`unsent`), never here.
    const sent: SentGraph = { submission, sent: this.host.send(msg), fresh, reasked, before };
    this.sentGraphs.set(msg, sent);
    this.remember(msg.stimulusId, sent);
    return futures;
  }

  /** How many submissions are remembered as ones the scheduler may still refuse. */
  get refusable(): number {
    return this.mayBeRefused.size;
  }

  private remember(stimulusId: string, sent: SentGraph): void {
    const remembered = this.mayBeRefused;
    remembered.set(stimulusId, sent);
    if (remembered.size < this.pruneAt) return;
    for (const [id, old] of remembered) if (!stillFailable(old)) remembered.delete(id);
    // Twice the survivors: a look costs what the submissions since the last one did.
    this.pruneAt = Math.max(MIN_PRUNE_AT, 2 * remembered.size);
    if (remembered.size >= MIN_PRUNE_AT && !this.askedHandled) {
      this.askedHandled = true;
      this.host.askHandled();
    }
  }

  /**
   * The scheduler answered a request numbered `sent` among the messages sent
   * (see `SchedulerConnection.onAnswered`): it handled every submission sent
   * before, which it would have refused by now, so none of them can be.
   */
  handledBefore(sent: number): void {
    this.askedHandled = false;
    const remembered = this.mayBeRefused;
    for (const [id, graph] of remembered) {
      if (graph.sent >= sent) break;
      remembered.delete(id);
    }
    this.pruneAt = Math.max(MIN_PRUNE_AT, 2 * remembered.size);
  }

  /**
   * The scheduler refused the submission `stimulusId` as malformed
   * (`message-refused`), for `why`: its futures fail with a
   * `SchedulerReplyError` saying so (nothing else will ever be said of their
   * keys), and this is true; false if no submission remembered has that id.
   */
  refused(stimulusId: string, why: string): boolean {
    const sent = this.mayBeRefused.get(stimulusId);
    if (sent === undefined) return false;
    // The scheduler takes a client's messages in order: the earlier ones were taken or refused.
    for (const [id, earlier] of this.mayBeRefused) {
      this.mayBeRefused.delete(id);
      if (earlier === sent) break;
    }
    const err = new SchedulerReplyError(
      "update-graph",
      `the scheduler refused the graph submitted as malformed: ${why}`,
    );
    this.fail(sent, err);
    return true;
  }

  /** The client closed: its futures failed, no submission is to be failed any more. */
  closed(): void {
    this.mayBeRefused.clear();
  }

  /**
   * `msg` could not be sent to the scheduler, for `err`: if it is a submission,
   * its futures fail with the reason (they would wait forever), and this is true.
   */
  unsent(msg: unknown, err: Error): boolean {
    const sent = typeof msg === "object" && msg !== null ? this.sentGraphs.get(msg) : undefined;
    if (sent === undefined) return false;
    this.mayBeRefused.delete((msg as UpdateGraphMsg).stimulusId);
    this.fail(sent, err);
    return true;
  }

  /**
   * The submission `sent` never reached the scheduler's state, for `err`: its
   * keys go back to the numbers the scheduler saw, and each fails with `err`
   * once every ask of it failed.
   */
  private fail(sent: SentGraph, err: Error): void {
    const { submission } = sent;
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
  }
}
