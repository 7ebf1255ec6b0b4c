import { describe, expect, it } from "vitest";
import type { GraphTask, UpdateGraphMsg } from "../protocol/messagesClient.ts";
import { SchedulerReplyError } from "./errors.ts";
import type { KeyRecord } from "./keyRecord.ts";
import { Submissions } from "./submissions.ts";
import { standInFutureHost } from "./testFutureHost.ts";

/**
 * Submissions over a client stand-in: what they send, in order with the
 * releases flushed, and what becomes of the keys of those that could not be sent;
 * the numbers of the requests they asked to be answered (`askHandled`), numbered
 * among the messages sent as the connection numbers them.
 */
function submissionsOfStandIn() {
  const futureHost = standInFutureHost();
  const sent: UpdateGraphMsg[] = [];
  const log: string[] = [];
  const asked: number[] = [];
  let messages = 0;
  const submissions = new Submissions({
    id: "client-1",
    futureHost,
    record: (key) => futureHost.records.get(key),
    flushReleases: () => log.push("flush releases"),
    send: (msg) => {
      log.push(`send ${msg.submission}`);
      sent.push(msg);
      return ++messages;
    },
    askHandled: () => {
      asked.push(++messages);
    },
  });
  const record = (key: string) => futureHost.records.get(key) as KeyRecord;
  /** Another request sent (its number). */
  const request = () => ++messages;
  return { submissions, sent, log, record, asked, request };
}

const TASKS: ReadonlyMap<string, GraphTask> = new Map([
  ["k", { spec: { fn: "inc", args: [1] }, dependencies: [] }],
]);

describe("Submissions", () => {
  it("sends each after the releases pending, numbered, with the keys as they were at the call", () => {
    const { submissions, sent, log, record } = submissionsOfStandIn();
    expect(submissions.last).toBe(0);
    const keys = ["k", "j"];
    const futures = submissions.submit(TASKS, keys);
    keys.push("later");
    expect(futures.map((f) => f.key)).toEqual(["k", "j"]);
    expect(sent[0]).toMatchObject({
      op: "update-graph",
      tasks: TASKS,
      keys: ["k", "j"],
      clientId: "client-1",
      submission: 1,
    });
    expect(record("k").submission).toBe(1);
    // A dataset asked for takes a number too: the next graph's is after it.
    expect(submissions.next()).toBe(2);
    submissions.submit(TASKS, ["k"]);
    expect(submissions.last).toBe(3);
    expect(record("k").submission).toBe(3);
    expect(record("j").submission).toBe(1);
    expect(log).toEqual(["flush releases", "send 1", "flush releases", "send 3"]);
  });

  it("fails the keys of one that could not be sent, unless an earlier ask of them was sent", () => {
    const { submissions, sent, record } = submissionsOfStandIn();
    const [k] = submissions.submit(TASKS, ["k"]);
    const [, j] = submissions.submit(TASKS, ["k", "j"]);
    const err = new Error("too large to send");
    expect(submissions.unsent(sent[1], err)).toBe(true);
    // j was asked for only there: it would wait forever.
    expect(j.status).toBe("error");
    expect(record("j").error).toBe(err);
    expect(record("j").unsent).toBe(true);
    // k was sent before: it is computed, and numbered as the scheduler saw it.
    expect(k.status).toBe("pending");
    expect(record("k").submission).toBe(1);
    // Messages that are no submission of these are not theirs to fail.
    expect(submissions.unsent({ op: "update-graph" }, err)).toBe(false);
    expect(submissions.unsent(null, err)).toBe(false);
  });

  it("fails a key asked for in several submissions once every one of them could not be sent", () => {
    const { submissions, sent, record } = submissionsOfStandIn();
    const [k] = submissions.submit(TASKS, ["k"]);
    submissions.submit(TASKS, ["k"]);
    submissions.unsent(sent[0], new Error("first"));
    expect(k.status).toBe("pending");
    expect(record("k").submission).toBe(2); // the later submission's, which may still arrive
    const last = new Error("second");
    submissions.unsent(sent[1], last);
    expect(k.status).toBe("error");
    expect(record("k").error).toBe(last);
    // Back past both, to before any: the scheduler saw neither.
    expect(record("k").submission).toBe(0);
  });

  it("asks afresh for a key whose submission could not be sent, or that was cancelled", () => {
    const { submissions, sent, record } = submissionsOfStandIn();
    const [k] = submissions.submit(TASKS, ["k"]);
    submissions.unsent(sent[0], new Error("not sent"));
    expect(k.status).toBe("error");
    // Asked for again in two submissions: the first not sent, k waits for the second.
    const [again] = submissions.submit(TASKS, ["k"]);
    expect(again.status).toBe("pending");
    expect(record("k").error).toBeNull();
    submissions.submit(TASKS, ["k"]);
    submissions.unsent(sent[1], new Error("not sent either"));
    expect(again.status).toBe("pending");
    record("k").fail("cancelled", new Error("cancelled"));
    submissions.submit(TASKS, ["k"]);
    expect(again.status).toBe("pending");
    // A key the scheduler has is not asked afresh: its news stands.
    record("k").finish(["w1"], null);
    submissions.submit(TASKS, ["k"]);
    expect(again.status).toBe("finished");
  });

  it("leaves pending a key the scheduler told of meanwhile: it has it", () => {
    const { submissions, sent, record } = submissionsOfStandIn();
    const [k] = submissions.submit(TASKS, ["k"]);
    record("k").reset(); // news of k: being computed again, after a loss
    submissions.submit(TASKS, ["k"]);
    submissions.unsent(sent[1], new Error("not sent"));
    expect(k.status).toBe("pending");
    const [j] = submissions.submit(TASKS, ["j"]);
    record("j").reset();
    submissions.unsent(sent[2], new Error("not sent"));
    expect(j.status).toBe("pending");
  });

  it("takes a key named twice in one submission (a map over equal items) as one ask", () => {
    const { submissions, sent, record } = submissionsOfStandIn();
    const [a, b] = submissions.submit(TASKS, ["k", "k"]);
    expect(sent[0].keys).toEqual(["k", "k"]);
    submissions.unsent(sent[0], new Error("not sent"));
    expect(a.status).toBe("error");
    expect(b.status).toBe("error");
    expect(record("k").submission).toBe(0);
  });

  it("fails the keys of one the scheduler refused as malformed, unless an earlier ask of them was taken", () => {
    const { submissions, sent, record } = submissionsOfStandIn();
    const [k] = submissions.submit(TASKS, ["k"]);
    const [, j] = submissions.submit(TASKS, ["k", "j"]);
    expect(sent[0].stimulusId).not.toBe(sent[1].stimulusId);
    expect(
      submissions.refused(sent[1].stimulusId, "invalid update-graph: tasks must be a Map"),
    ).toBe(true);
    expect(j.status).toBe("error");
    const err = record("j").error as SchedulerReplyError;
    expect(err).toBeInstanceOf(SchedulerReplyError);
    expect(err.op).toBe("update-graph");
    expect(err.message).toBe(
      "the scheduler refused the graph submitted as malformed: invalid update-graph: tasks must be a Map",
    );
    // Asking for j again starts afresh: the scheduler never took it from this client.
    expect(record("j").unsent).toBe(true);
    // k was asked for before, in a submission the scheduler took: it is computed.
    expect(k.status).toBe("pending");
    expect(record("k").submission).toBe(1);
    // Each is refused once, and an id that is no submission's is not one to fail.
    expect(submissions.refused(sent[1].stimulusId, "again")).toBe(false);
    expect(submissions.refused("update-graph-unknown", "no")).toBe(false);
  });

  it("forgets the submissions the scheduler took once one after them is refused", () => {
    const { submissions, sent } = submissionsOfStandIn();
    const [a] = submissions.submit(TASKS, ["a"]);
    submissions.submit(TASKS, ["b"]);
    const [c] = submissions.submit(TASKS, ["c"]);
    expect(submissions.refusable).toBe(3);
    submissions.refused(sent[1].stimulusId, "bad");
    // The scheduler takes them in order: the first was taken, it can no longer be refused.
    expect(submissions.refusable).toBe(1);
    expect(submissions.refused(sent[0].stimulusId, "late")).toBe(false);
    expect(a.status).toBe("pending");
    expect(submissions.refused(sent[2].stimulusId, "bad too")).toBe(true);
    expect(c.status).toBe("error");
    expect(submissions.refusable).toBe(0);
  });

  it("forgets, once many are remembered, the submissions whose refusal would fail no future held", () => {
    const { submissions, sent, record } = submissionsOfStandIn();
    const [held] = submissions.submit(TASKS, ["held"]);
    // Many more: each heard of (finished) or released before the next.
    for (let i = 0; i < 1000; i++) {
      const [f] = submissions.submit(TASKS, [`k${i}`]);
      if (i % 2 === 0) record(`k${i}`).finish(["w1"], null);
      else f.release();
    }
    // Not a thousand: a few since the last look, and the one whose key is still awaited.
    expect(submissions.refusable).toBeLessThan(64);
    expect(submissions.refused(sent[0].stimulusId, "bad")).toBe(true);
    expect(held.status).toBe("error");
    // One not looked at yet is still refusable, and fails its future.
    const [late] = submissions.submit(TASKS, ["late"]);
    expect(submissions.refused(sent[sent.length - 1].stimulusId, "bad")).toBe(true);
    expect(late.status).toBe("error");
  });

  it("forgets the submissions sent before a request the scheduler answered: it handled them", () => {
    const { submissions, sent, request } = submissionsOfStandIn();
    submissions.submit(TASKS, ["a"]);
    submissions.submit(TASKS, ["b"]);
    const between = request();
    const [c] = submissions.submit(TASKS, ["c"]);
    submissions.handledBefore(between);
    // Taken (a refusal would have come before the answer): no longer refusable.
    expect(submissions.refusable).toBe(1);
    expect(submissions.refused(sent[1].stimulusId, "late")).toBe(false);
    // One sent after the request still is, and fails its future.
    expect(submissions.refused(sent[2].stimulusId, "bad")).toBe(true);
    expect(c.status).toBe("error");
  });

  it("stays bounded while a key pending is asked for again and again, asking the scheduler to answer", () => {
    // Each ask might be the one that fails the key: without an answer of the scheduler,
    // every submission of it was remembered until the key was heard of.
    const { submissions, sent, asked } = submissionsOfStandIn();
    const [first] = submissions.submit(TASKS, ["k"]);
    let most = 0;
    for (let i = 0; i < 10_000; i++) {
      submissions.submit(TASKS, ["k"]);
      most = Math.max(most, submissions.refusable);
      // The scheduler answers a request a while after it was sent (here 20 submissions).
      if (asked.length > 0 && i % 20 === 0) submissions.handledBefore(asked.shift() as number);
    }
    expect(most).toBeLessThanOrEqual(128);
    expect(asked.length).toBeLessThanOrEqual(1);
    // Refusing the last now fails nothing: an earlier ask of k was taken.
    expect(submissions.refused(sent[sent.length - 1].stimulusId, "bad")).toBe(true);
    expect(first.status).toBe("pending");
  });

  it("forgets every submission when the client closes", () => {
    const { submissions, sent } = submissionsOfStandIn();
    submissions.submit(TASKS, ["k"]);
    submissions.closed();
    expect(submissions.refusable).toBe(0);
    expect(submissions.refused(sent[0].stimulusId, "bad")).toBe(false);
  });

  it("no longer fails on refusal the keys of one that could not be sent (already failed)", () => {
    const { submissions, sent, record } = submissionsOfStandIn();
    const [k] = submissions.submit(TASKS, ["k"]);
    const first = new Error("not sent");
    submissions.unsent(sent[0], first);
    expect(submissions.refused(sent[0].stimulusId, "bad")).toBe(false);
    expect(k.status).toBe("error");
    expect(record("k").error).toBe(first);
  });
});
