import { describe, expect, it } from "vitest";
import { MessageTooLargeError, SerializationError } from "../comm/errors.ts";
import { RequestOps, standInsFor, unsentWhy } from "./unsentToClient.ts";

const MIB = 2 ** 20;
const overClient = new MessageTooLargeError(
  3 * MIB,
  MIB,
  "send",
  "the maxMessageBytes of client c1",
);

describe("unsentWhy", () => {
  it("names whose limit, the scheduler's own when the error names none", () => {
    expect(unsentWhy(overClient)).toBe(
      `MessageTooLargeError: cannot send a message of 3.00 MiB (${3 * MIB} bytes): larger than the maxMessageBytes of client c1 (1.00 MiB)`,
    );
    expect(unsentWhy(new MessageTooLargeError(3 * MIB, MIB, "send"))).toBe(
      `MessageTooLargeError: cannot send a message of 3.00 MiB (${3 * MIB} bytes): larger than the scheduler's --max-message-bytes (1.00 MiB)`,
    );
    expect(unsentWhy(new SerializationError("a function at .value"))).toBe(
      "SerializationError: a function at .value",
    );
  });
});

describe("standInsFor", () => {
  it("answers a reply's request with an error naming its op, known once the reply is queued", () => {
    const ops = new RequestOps();
    ops.asked({ op: "dump-state", requestId: 7 });
    const reply = { op: "reply", requestId: 7, result: "…" };
    ops.queued(reply);
    expect(standInsFor("c1", reply, overClient, ops)).toEqual({
      messages: [
        {
          op: "reply",
          requestId: 7,
          error: `dump-state: the scheduler cannot send its answer to client c1: ${unsentWhy(overClient)}`,
        },
      ],
      whole: false,
    });
    // A reply to a request not recorded: named by its id.
    const other = { op: "reply", requestId: 8, result: "…" };
    ops.queued(other);
    expect(standInsFor("c1", other, overClient, ops).messages).toMatchObject([
      { op: "reply", requestId: 8, error: expect.stringMatching(/^request 8: the scheduler/) },
    ]);
  });

  it("does not replace a stand-in that cannot be sent either", () => {
    const ops = new RequestOps();
    const [standIn] = standInsFor(
      "c1",
      { op: "reply", requestId: 1, result: 1 },
      overClient,
      ops,
    ).messages;
    expect(standInsFor("c1", standIn, overClient, ops)).toEqual({ messages: [], whole: false });
  });

  it("makes an answer by stimulus id answer-unsent, with a found dataset's keys", () => {
    const ops = new RequestOps();
    const dataset = {
      op: "dataset",
      name: "d",
      found: true,
      keys: ["x", "y"],
      data: "…",
      stimulusId: "get-dataset-1",
    };
    expect(standInsFor("c1", dataset, overClient, ops)).toEqual({
      messages: [
        {
          op: "answer-unsent",
          answer: "dataset",
          error: `the scheduler cannot send its answer (dataset) to client c1: ${unsentWhy(overClient)}`,
          keys: ["x", "y"],
          stimulusId: "get-dataset-1",
        },
      ],
      whole: false,
    });
    const updated = { op: "data-updated", rejected: [], stimulusId: "scatter-1" };
    expect(standInsFor("c1", updated, overClient, ops).messages).toMatchObject([
      { op: "answer-unsent", answer: "data-updated", stimulusId: "scatter-1" },
    ]);
    expect(standInsFor("c1", updated, overClient, ops).messages[0]).not.toHaveProperty("keys");
  });

  it("makes a task-erred one with a short text saying so, keeping the error's name", () => {
    const ops = new RequestOps();
    const erred = {
      op: "task-erred",
      key: "k",
      blame: "b",
      exception: { name: "RangeError", message: "z".repeat(3 * MIB) },
      traceback: { frames: [] },
      exceptionText: `RangeError: ${"z".repeat(3 * MIB)}`,
      tracebackText: "at f",
      stimulusId: "s1",
    };
    const { messages, whole } = standInsFor("c1", erred, overClient, ops);
    expect(whole).toBe(false);
    const [standIn] = messages;
    const message = `the scheduler cannot send the error of task b to client c1 (${unsentWhy(overClient)}); it starts: RangeError: ${"z".repeat(2_000 - 12)}…`;
    expect(standIn).toEqual({
      op: "task-erred",
      key: "k",
      blame: "b",
      exception: { name: "RangeError", message },
      traceback: null,
      exceptionText: `RangeError: ${message}`,
      tracebackText: "",
      stimulusId: "s1",
    });
  });

  it("sends a cancelled-keys of several keys in two halves; drops what nothing waits for", () => {
    const ops = new RequestOps();
    const cancelled = {
      op: "cancelled-keys",
      keys: ["a", "b", "c"],
      reason: "lost dependencies",
      stimulusId: "s",
      submission: 3,
    };
    // The halves carry all of it: nothing was lost.
    expect(standInsFor("c1", cancelled, overClient, ops)).toEqual({
      messages: [
        { ...cancelled, keys: ["a", "b"] },
        { ...cancelled, keys: ["c"] },
      ],
      whole: true,
    });
    const none = { messages: [], whole: false };
    expect(standInsFor("c1", { ...cancelled, keys: ["a"] }, overClient, ops)).toEqual(none);
    expect(standInsFor("c1", { op: "pubsub-msg", name: "t", msg: "…" }, overClient, ops)).toEqual(
      none,
    );
    expect(
      standInsFor("c1", { op: "event", topic: "t", event: [0, "…"] }, overClient, ops),
    ).toEqual(none);
  });
});

describe("RequestOps", () => {
  it("forgets a request once its reply is queued: a later reply of the same id is not taken for its answer", () => {
    const ops = new RequestOps();
    ops.asked({ op: "who-has", requestId: 3 });
    const first = { op: "reply", requestId: 3, result: {} };
    ops.queued(first);
    expect(ops.of(first)).toBe("who-has");
    const again = { op: "reply", requestId: 3, result: {} };
    ops.queued(again);
    expect(ops.of(again)).toBeUndefined();
  });
});
