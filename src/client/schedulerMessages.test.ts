import type { Logger } from "pino";
import { describe, expect, it } from "vitest";
import type { ServerToClientMessage } from "../protocol/messagesSession.ts";
import { NoWorkerError, RemoteTaskError } from "./errors.ts";
import { KeyRecord } from "./keyRecord.ts";
import { type MessageHost, SchedulerMessages } from "./schedulerMessages.ts";

/**
 * The messages of a scheduler handled for a stand-in client holding records of
 * `keys`: what each part of the client was handed is recorded in `calls`.
 */
function setup(keys: string[] = ["x"]) {
  const records = new Map(keys.map((k) => [k, new KeyRecord(k)]));
  const calls: unknown[][] = [];
  const record =
    (name: string) =>
    (...args: unknown[]) => {
      calls.push([name, ...args]);
      return true;
    };
  const host: MessageHost = {
    record: (key) => records.get(key),
    peers: { remove: record("peers.remove") },
    cancels: { cancelled: record("cancels.cancelled"), refused: record("cancels.refused") },
    requests: {
      answer: record("requests.answer"),
      answerUnsent: record("requests.answerUnsent"),
      refused: record("requests.refused"),
    },
    submissions: { refused: record("submissions.refused") },
    datasets: { receive: record("datasets.receive"), letGo: record("datasets.letGo") },
    subscriptions: { deliver: record("subscriptions.deliver") },
    pubsub: { deliver: record("pubsub.deliver") },
    schedulerFailed: record("schedulerFailed"),
    logger: {
      error: (fields: unknown, msg: string) => calls.push(["logger.error", msg, fields]),
      warn: (fields: unknown, msg: string) => calls.push(["logger.warn", msg, fields]),
    } as unknown as Logger,
  };
  const messages = new SchedulerMessages(host);
  const on = (msg: unknown) => messages.onMessage(msg as ServerToClientMessage);
  return { records, calls, on, rec: (key: string) => records.get(key) as KeyRecord };
}

describe("SchedulerMessages", () => {
  it("finishes a key in memory on its holders, closing the connections to the holders no longer named", () => {
    const { calls, on, rec } = setup();
    on({ op: "key-in-memory", key: "x", typename: "number", whoHas: ["tcp://a:1", "tcp://b:1"] });
    expect(rec("x")).toMatchObject({ status: "finished", holders: ["tcp://a:1", "tcp://b:1"] });
    expect(rec("x").typename).toBe("number");
    expect(calls).toEqual([]);
    // Moved: b still holds it, a no longer does.
    on({ op: "key-in-memory", key: "x", typename: "number", whoHas: ["tcp://b:1", "tcp://c:1"] });
    expect(rec("x").holders).toEqual(["tcp://b:1", "tcp://c:1"]);
    expect(calls).toEqual([
      ["peers.remove", "tcp://a:1", "the scheduler no longer names tcp://a:1 as a holder of x"],
    ]);
  });

  it("finishes a key in memory whose holders are not named (or not as a list) with none known", () => {
    const { calls, on, rec, records } = setup(["x", "y"]);
    on({ op: "key-in-memory", key: "x", typename: "number" });
    on({ op: "key-in-memory", key: "y", typename: "number", whoHas: "tcp://a:1" });
    for (const key of records.keys())
      expect(rec(key)).toMatchObject({ status: "finished", holders: [] });
    expect(calls).toEqual([]);
  });

  it("fails the cancel, request or graph the scheduler refused as malformed, and logs every refusal", () => {
    const { calls, on } = setup([]);
    on({ op: "message-refused", refused: "cancel-keys", error: "bad keys", stimulusId: "s1" });
    on({ op: "message-refused", refused: "publish-dataset", error: "bad name", stimulusId: "s2" });
    // The futures of a refused graph wait for no answer, but would for their keys forever.
    on({ op: "message-refused", refused: "update-graph", error: "bad tasks", stimulusId: "s3" });
    expect(calls.filter((c) => c[0] !== "logger.warn")).toEqual([
      ["cancels.refused", "s1", "bad keys"],
      ["requests.refused", "publish-dataset", "s2", "bad name"],
      ["submissions.refused", "s3", "bad tasks"],
    ]);
    expect(
      calls.filter((c) => c[0] === "logger.warn").map((c) => (c[2] as { op: string }).op),
    ).toEqual(["cancel-keys", "publish-dataset", "update-graph"]);
  });

  it("ignores news of a key the client holds no future of", () => {
    const { calls, on } = setup([]);
    on({ op: "key-in-memory", key: "y", typename: "number", whoHas: ["tcp://a:1"] });
    on({
      op: "task-erred",
      key: "y",
      blame: "y",
      exception: null,
      exceptionText: "E",
      tracebackText: "",
    });
    on({ op: "lost-data", key: "y" });
    expect(calls).toEqual([]);
  });

  it("fails an erred key with the task's error, closing the connections to where it was (an actor's worker)", () => {
    const { calls, on, rec } = setup();
    on({ op: "key-in-memory", key: "x", typename: "Counter", whoHas: ["tcp://a:1"] });
    on({
      op: "task-erred",
      key: "x",
      blame: "x",
      exception: null,
      exceptionText: "TypeError: bad",
      tracebackText: "",
    });
    expect(rec("x").status).toBe("error");
    expect(rec("x").error).toBeInstanceOf(RemoteTaskError);
    expect(rec("x").error).toMatchObject({ key: "x", blame: "x", remoteName: "TypeError" });
    expect(calls).toEqual([
      ["peers.remove", "tcp://a:1", "the scheduler no longer names tcp://a:1 as a holder of x"],
    ]);
  });

  it("a lost key is pending again, its former holders' connections closed", () => {
    const { calls, on, rec } = setup();
    on({ op: "key-in-memory", key: "x", typename: "number", whoHas: ["tcp://a:1"] });
    on({ op: "lost-data", key: "x" });
    expect(rec("x")).toMatchObject({ status: "pending", holders: [] });
    expect(calls.map((c) => c.slice(0, 2))).toEqual([["peers.remove", "tcp://a:1"]]);
  });

  it("a key held up for want of a worker is pending again once the task holding it up is runnable, not another", () => {
    const { on, rec } = setup();
    on({ op: "task-no-worker", key: "x", task: "dep", reason: "no worker has resource 'GPU'" });
    expect(rec("x").status).toBe("no-worker");
    expect(rec("x").error).toBeInstanceOf(NoWorkerError);
    on({ op: "task-runnable", key: "x", task: "other" });
    expect(rec("x").status).toBe("no-worker");
    on({ op: "task-runnable", key: "x", task: "dep" });
    expect(rec("x").status).toBe("pending");
  });

  it("hands answers to the requests, datasets to the datasets, events and published messages to their subscribers", () => {
    const { calls, on } = setup();
    const answerOps = [
      "replicated",
      "rebalanced",
      "workers-retired",
      "restarted",
      "workers-restarted",
      "data-updated",
      "dataset-published",
      "dataset-unpublished",
    ];
    const answers = answerOps.map((op, i) => ({ op, stimulusId: `s-${i}` }));
    for (const answer of answers) on(answer);
    const dataset = { op: "dataset", stimulusId: "s-2" };
    on(dataset);
    on({ op: "event", topic: "t", event: [1, "e"] });
    on({ op: "pubsub-msg", name: "n", msg: "m" });
    on({ op: "scheduler-failed", message: "out of memory" });
    const cancelled = { op: "cancelled-keys", keys: ["x"] };
    on(cancelled);
    on({ op: "reply", requestId: 1, result: null }); // the connection's: nothing to do here
    expect(calls).toEqual([
      ...answers.map((a) => ["requests.answer", a.stimulusId, a]),
      ["datasets.receive", dataset],
      ["subscriptions.deliver", "t", [1, "e"]],
      ["pubsub.deliver", "n", "m"],
      ["schedulerFailed", "out of memory"],
      ["cancels.cancelled", cancelled],
    ]);
  });

  it("an answer the scheduler could not send fails its request, and lets go of the keys it held for it", () => {
    const { calls, on } = setup();
    on({
      op: "answer-unsent",
      answer: "dataset",
      stimulusId: "s-1",
      error: "too large",
      keys: ["k1"],
    });
    on({ op: "answer-unsent", answer: "replicated", stimulusId: "s-2", error: "too large" });
    expect(calls).toEqual([
      ["requests.answerUnsent", "dataset", "s-1", "too large"],
      ["datasets.letGo", ["k1"]],
      ["requests.answerUnsent", "replicated", "s-2", "too large"],
    ]);
  });

  it("logs and skips a message it cannot use, and one it does not know", () => {
    const { calls, on } = setup();
    on(null);
    on({ op: "bogus" });
    expect(calls).toEqual([
      ["logger.error", "ignored a malformed message from the scheduler", expect.anything()],
      ["logger.warn", "ignored an unknown message", { op: "bogus" }],
    ]);
  });
});
