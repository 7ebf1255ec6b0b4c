import { describe, expect, it } from "vitest";
import type { CancelKeysMsg } from "../protocol/messagesClient.ts";
import { Cancels } from "./cancels.ts";
import { KeyRecord } from "./keyRecord.ts";

/** Cancels over stand-in records, with the submission count and the sent requests at hand. */
function setup(keys: readonly string[]) {
  const records = new Map(keys.map((k) => [k, new KeyRecord(k)]));
  const sent: CancelKeysMsg[] = [];
  const submissions = { last: 1 };
  let ids = 0;
  const cancels = new Cancels({
    id: "c1",
    requests: { stimulusId: (prefix) => `${prefix}-${++ids}` },
    submissions,
    record: (key) => records.get(key),
    send: (msg) => {
      sent.push(msg);
    },
  });
  const rec = (key: string) => records.get(key) as KeyRecord;
  return { cancels, rec, sent, submissions };
}

describe("Cancels", () => {
  it("the answer to an own cancel cancels the keys asked for, even those it does not name", async () => {
    const { cancels, rec, sent } = setup(["a", "b"]);
    const asked = cancels.request(["a", "b"], false);
    cancels.cancelled({
      op: "cancelled-keys",
      keys: ["a"],
      reason: "asked",
      stimulusId: sent[0].stimulusId,
      submission: 1,
    });
    await asked;
    expect([rec("a").status, rec("b").status]).toEqual(["cancelled", "cancelled"]);
    // Answered: nothing of the request is kept.
    expect((cancels as unknown as { pending: Map<string, unknown> }).pending.size).toBe(0);
  });

  it("an own cancel spares a key submitted anew after it was asked, and a key already lost", async () => {
    const { cancels, rec, sent, submissions } = setup(["a", "b"]);
    rec("b").fail("lost", new Error("client closed"));
    const asked = cancels.request(["a", "b"], false);
    submissions.last = 2;
    rec("a").submission = 2;
    // The scheduler handled the new submission before answering: only the request bounds what it cancels.
    cancels.cancelled({
      op: "cancelled-keys",
      keys: ["a", "b"],
      reason: "asked",
      stimulusId: sent[0].stimulusId,
      submission: 2,
    });
    await asked;
    expect(rec("a").status).toBe("pending");
    expect(rec("b").status).toBe("lost");
  });
});
