import { describe, expect, it } from "vitest";
import type { GraphTask, UpdateGraphMsg } from "../protocol/messagesClient.ts";
import type { KeyRecord } from "./keyRecord.ts";
import { Submissions } from "./submissions.ts";
import { standInFutureHost } from "./testFutureHost.ts";

/**
 * Submissions over a client stand-in: what they send, in order with the
 * releases flushed, and what becomes of the keys of those that could not be sent.
 */
function submissionsOfStandIn() {
  const futureHost = standInFutureHost();
  const sent: UpdateGraphMsg[] = [];
  const log: string[] = [];
  const submissions = new Submissions({
    id: "client-1",
    futureHost,
    record: (key) => futureHost.records.get(key),
    flushReleases: () => log.push("flush releases"),
    send: (msg) => {
      log.push(`send ${msg.submission}`);
      sent.push(msg);
    },
  });
  const record = (key: string) => futureHost.records.get(key) as KeyRecord;
  return { submissions, sent, log, record };
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
});
