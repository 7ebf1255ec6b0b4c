import { describe, expect, it } from "vitest";
import type { Comm } from "./comm.ts";
import { limitReplyToRequester, withReplyLimit } from "./replyLimit.ts";
import type { RpcContext } from "./rpc.ts";

describe("a requester's limit in its request", () => {
  it("withReplyLimit adds who asks and the comm's own limit, where it has one", () => {
    expect(withReplyLimit({ fn: "f" }, "client-1", { maxMessageBytes: 1000 } as Comm)).toEqual({
      fn: "f",
      who: "client-1",
      maxMessageBytes: 1000,
    });
    expect(withReplyLimit({ fn: "f" }, "client-1", {} as Comm)).toEqual({
      fn: "f",
      who: "client-1",
    });
  });

  it("limitReplyToRequester limits the answer to it, naming the requester; refuses a bad one", () => {
    const limits: [number, string][] = [];
    const ctx = { limitReplyTo: (n: number, whose: string) => limits.push([n, whose]) };
    const c = ctx as unknown as RpcContext;
    limitReplyToRequester("run", { who: "client-1", maxMessageBytes: 1000 }, c);
    limitReplyToRequester("run", { maxMessageBytes: 2000 }, c);
    limitReplyToRequester("run", { who: "client-1" }, c);
    limitReplyToRequester("run", { maxMessageBytes: 3000 }, undefined);
    expect(limits).toEqual([
      [1000, "the maxMessageBytes of client-1"],
      [2000, "the maxMessageBytes of the requester"],
    ]);
    for (const bad of [0, -1, 1.5, "1000", null]) {
      expect(() => limitReplyToRequester("actor_execute", { maxMessageBytes: bad }, c)).toThrow(
        /^actor_execute: maxMessageBytes must be a positive integer, got /,
      );
    }
  });
});
