import { describe, expect, it } from "vitest";
import { MessageTooLargeError } from "./errors.ts";
import { lowerPeerLimit, peerLimit, peerLimitBelow, sendLimitError } from "./peerLimit.ts";

describe("peer limits", () => {
  it("a message exactly at a limit may go, one byte more may not (a reader takes up to its limit)", () => {
    expect(sendLimitError(100, 100, null)).toBeNull();
    expect(sendLimitError(101, 100, null)).toBeInstanceOf(MessageTooLargeError);
    const peer = peerLimit(50, "the peer's limit");
    expect(sendLimitError(50, 100, peer)).toBeNull();
    expect(sendLimitError(51, 100, peer)?.message).toMatch(/larger than the peer's limit/);
  });

  it("a peer's limit not below the comm's own changes nothing: errors name the comm's own", () => {
    expect(peerLimitBelow(100, "the peer's limit", 100)).toBeNull();
    expect(peerLimitBelow(99, "the peer's limit", 100)).toEqual({
      maxMessageBytes: 99,
      whose: "the peer's limit",
    });
    expect(lowerPeerLimit(null, peerLimit(100, "once"), 100)).toBeNull();
    expect(sendLimitError(101, 100, peerLimitBelow(100, "the peer's", 100))?.message).toMatch(
      /larger than maxMessageBytes/,
    );
  });
});
