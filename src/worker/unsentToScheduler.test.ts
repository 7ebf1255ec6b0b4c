import { describe, expect, it } from "vitest";
import { MessageTooLargeError, SerializationError } from "../comm/errors.ts";
import { ERROR_START_CHARS } from "../protocol/errorStart.ts";
import type { TaskErredMsg } from "../protocol/messagesWorker.ts";
import { inPlaceOfUnsent } from "./unsentToScheduler.ts";

const tooLarge = new MessageTooLargeError(
  3e6,
  2 ** 20,
  "send",
  "the scheduler's --max-message-bytes",
);

function erred(text: string): TaskErredMsg {
  return {
    op: "task-erred",
    key: "k",
    runId: 7,
    exception: { name: "TaskError", message: text },
    traceback: { frames: ["…"] },
    exceptionText: `ValueError: ${text}`,
    tracebackText: "at f (file.js:1)",
    startstops: [{ action: "compute", start: 1, stop: 2 }],
    thread: 3,
    stimulusId: "task-erred-1",
  };
}

describe("inPlaceOfUnsent", () => {
  it("makes a too large task-erred one whose error says so, with the start of its text, the rest of the message kept", () => {
    const msg = erred("x".repeat(3e6));
    const [standIn] = inPlaceOfUnsent(msg, tooLarge);
    const message = `the worker cannot send the error of task k to the scheduler (${tooLarge.message}); it starts: ValueError: ${"x".repeat(ERROR_START_CHARS - "ValueError: ".length)}…`;
    expect(standIn).toEqual({
      ...msg,
      exception: { name: "TaskError", message },
      traceback: null,
      exceptionText: `TaskError: ${message}`,
      tracebackText: "",
    });
  });

  it("keeps a short text whole", () => {
    const [standIn] = inPlaceOfUnsent(erred("short"), tooLarge) as TaskErredMsg[];
    expect(standIn?.exceptionText).toMatch(/it starts: ValueError: short$/);
  });

  it("sends add-keys and request-refresh-who-has of many keys in halves", () => {
    const addKeys = { op: "add-keys", keys: ["a", "b", "c"], stimulusId: "s" };
    expect(inPlaceOfUnsent(addKeys, tooLarge)).toEqual([
      { op: "add-keys", keys: ["a", "b"], stimulusId: "s" },
      { op: "add-keys", keys: ["c"], stimulusId: "s" },
    ]);
    const refresh = { op: "request-refresh-who-has", keys: ["a", "b"], stimulusId: "s" };
    expect(inPlaceOfUnsent(refresh, tooLarge)).toEqual([
      { ...refresh, keys: ["a"] },
      { ...refresh, keys: ["b"] },
    ]);
    expect(inPlaceOfUnsent({ ...refresh, keys: ["a"] }, tooLarge)).toEqual([]);
  });

  it("stands in for nothing else: other messages, other errors, its own stand-ins", () => {
    expect(inPlaceOfUnsent({ op: "task-finished", key: "k" }, tooLarge)).toEqual([]);
    expect(inPlaceOfUnsent(erred("x"), new SerializationError("a function"))).toEqual([]);
    expect(inPlaceOfUnsent(null, tooLarge)).toEqual([]);
    const [standIn] = inPlaceOfUnsent(erred("x".repeat(5000)), tooLarge);
    expect(standIn).toBeDefined();
    expect(inPlaceOfUnsent(standIn, tooLarge)).toEqual([]);
  });

  it("names an error without a usable name Error", () => {
    const msg = { ...erred("x"), exception: { name: "" } };
    const [standIn] = inPlaceOfUnsent(msg, tooLarge) as TaskErredMsg[];
    expect(standIn.exceptionText).toMatch(/^Error: the worker cannot send/);
  });
});
