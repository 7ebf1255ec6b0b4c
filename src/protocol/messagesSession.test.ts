import { describe, expect, it } from "vitest";
import { limitSendsToScheduler } from "./messagesSession.ts";

describe("limitSendsToScheduler", () => {
  it("gives the comm the limit of the scheduler's reply, naming it", () => {
    const calls: [number, string][] = [];
    const comm = { limitSendsTo: (n: number, whose: string) => void calls.push([n, whose]) };
    limitSendsToScheduler(comm, { maxMessageBytes: 1024 });
    expect(calls).toEqual([[1024, "the scheduler's --max-message-bytes"]]);
  });

  it("changes nothing for a reply without one (an older scheduler) or with a bad one", () => {
    const calls: unknown[] = [];
    const comm = { limitSendsTo: (n: number) => void calls.push(n) };
    for (const maxMessageBytes of [undefined, null, "1024", 0, -5, 1.5, Number.NaN, 2 ** 60]) {
      limitSendsToScheduler(comm, { maxMessageBytes });
    }
    expect(calls).toEqual([]);
    // A comm without a limit (in-process) is left as it is.
    limitSendsToScheduler({}, { maxMessageBytes: 1024 });
  });
});
