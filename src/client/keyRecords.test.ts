import { describe, expect, it } from "vitest";
import type { ClientReleasesKeysMsg } from "../protocol/messagesClient.ts";
import { ClientClosedError } from "./errors.ts";
import { KeyRecords } from "./keyRecords.ts";

/** Records over a client stand-in that may be closed, keeping the keys of each release sent. */
function recordsOfStandIn() {
  const released: (readonly string[])[] = [];
  const client = { closed: null as Error | null };
  const records = new KeyRecords({
    id: "client-1",
    closedError: () => client.closed,
    send: (msg: ClientReleasesKeysMsg) => {
      expect(msg).toMatchObject({ op: "client-releases-keys", clientId: "client-1" });
      released.push(msg.keys);
    },
  });
  return { records, released, client };
}

/** The end of the turn: what `queueMicrotask` scheduled before has run. */
const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("KeyRecords", () => {
  it("shares one record per key, and releases the keys whose last reference went together, at the end of the turn", async () => {
    const { records, released } = recordsOfStandIn();
    const k = records.addRef("k");
    expect(records.addRef("k")).toBe(k);
    const j = records.addRef("j");
    records.dropRef("k");
    records.dropRef("j");
    expect(records.get("k")).toBe(k);
    records.dropRef("k");
    expect(released).toEqual([]);
    await endOfTurn();
    expect(released).toEqual([["j", "k"]]);
    expect(records.releasesSent).toBe(1);
    expect(records.size).toBe(0);
    // Their futures are done: released, with the reason.
    expect(k.status).toBe("lost");
    expect(j.error).toBeInstanceOf(ClientClosedError);
    expect(j.error?.message).toBe("the last future of the key was released");
    // The next turn's releases are sent too, in a message of their own.
    records.addRef("i");
    records.dropRef("i");
    await endOfTurn();
    expect(released).toEqual([["j", "k"], ["i"]]);
    expect(records.releasesSent).toBe(2);
  });

  it("keeps a key referred to again before the turn ended, and ignores a reference dropped twice", async () => {
    const { records, released } = recordsOfStandIn();
    const k = records.addRef("k");
    records.dropRef("k");
    records.dropRef("k"); // a second drop of the same future: nothing more to drop
    expect(records.addRef("k")).toBe(k);
    await endOfTurn();
    expect(released).toEqual([]);
    expect(records.get("k")).toBe(k);
    expect(k.status).toBe("pending");
  });

  it("sends what is pending when flushed, once, and nothing when nothing is", async () => {
    const { records, released } = recordsOfStandIn();
    records.flushReleases();
    records.addRef("k");
    records.dropRef("k");
    records.flushReleases();
    expect(released).toEqual([["k"]]);
    await endOfTurn();
    expect(released).toEqual([["k"]]);
    expect(records.releasesSent).toBe(1);
  });

  it("of a closed client: a new record is failed at once, and nothing is sent", async () => {
    const { records, released, client } = recordsOfStandIn();
    const k = records.addRef("k");
    records.addRef("i");
    records.dropRef("i"); // its release pending when the client closes
    const closed = new ClientClosedError("closed");
    client.closed = closed;
    const j = records.addRef("j");
    expect(j.status).toBe("lost");
    expect(j.error).toBe(closed);
    k.fail("lost", closed); // as the client fails what it held
    records.dropRef("k");
    records.dropRef("j");
    records.flushReleases();
    await endOfTurn();
    expect(released).toEqual([]);
    // Their futures keep the reason they failed: the client closed, not a release.
    expect(k.error).toBe(closed);
    expect(j.error).toBe(closed);
    expect(records.releasesSent).toBe(0);
  });
});
