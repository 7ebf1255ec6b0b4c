import { describe, expect, it } from "vitest";
import type { Comm } from "../comm/comm.ts";
import { MessageTooLargeError, SerializationError } from "../comm/errors.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import { type SessionHost, sessionStream } from "./sessionHost.ts";

/** A comm whose peer has ended it: every send fails as a socket ended by the other party does. */
function endedComm(): Comm {
  const comm: Partial<Comm> = {
    peerAddress: "tcp://127.0.0.1:1",
    isClosed: false,
    send: () => Promise.reject(new Error("This socket has been ended by the other party")),
    abort: () => {},
  };
  return comm as Comm;
}

describe("sessionStream", () => {
  it("logs a failed send at debug when the peer said it is leaving, at warn otherwise", async () => {
    const { logger, records } = memoryLogger();
    const host = { options: { batchedSendIntervalMs: 0 }, logger } as unknown as SessionHost;
    let leaving = true;
    const failed = async (client: string) => {
      sessionStream(host, endedComm(), { client }, { peerLeaving: () => leaving }).send({
        op: "reply",
      });
      for (let i = 0; i < 10 && !records.some((r) => r.client === client); i++) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      return records.filter((r) => r.client === client).map((r) => [r.level, r.msg]);
    };
    expect(await failed("polite")).toEqual([[20, "cannot send to a client"]]);
    leaving = false;
    expect(await failed("rude")).toEqual([[40, "cannot send to a client"]]);
  });

  it("tells onQueued of each message, and onDropped of one that cannot be sent, at warn when over the peer's limit, at info when sent again in halves", async () => {
    const { logger, records } = memoryLogger();
    const host = { options: { batchedSendIntervalMs: 0 }, logger } as unknown as SessionHost;
    const errors: Record<string, Error> = {
      big: new MessageTooLargeError(10, 5, "send", "the maxMessageBytes of client c1"),
      odd: new SerializationError("a function"),
      halved: new MessageTooLargeError(10, 5, "send", "the maxMessageBytes of client c1"),
    };
    // A comm that refuses the messages named in `errors` (alone or in a batch) and stays open.
    const comm: Partial<Comm> = {
      peerAddress: "tcp://127.0.0.1:1",
      isClosed: false,
      send: (batch) => {
        const bad = (batch as { op: string }[]).find((m) => m.op in errors);
        return bad === undefined ? Promise.resolve() : Promise.reject(errors[bad.op]);
      },
      abort: () => {},
    };
    const queued: unknown[] = [];
    const dropped: [unknown, unknown][] = [];
    const stream = sessionStream(
      host,
      comm as Comm,
      { client: "c1" },
      {
        onQueued: (m) => queued.push(m),
        onDropped: (m, err) => {
          dropped.push([m, err]);
          // As for a message of many keys sent again in halves.
          return (m as { op: string }).op === "halved";
        },
      },
    );
    const msgs = [{ op: "fine" }, { op: "big" }, { op: "odd" }, { op: "halved" }];
    stream.send(...msgs);
    for (let i = 0; i < 20 && dropped.length < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(queued).toEqual(msgs);
    expect(dropped).toEqual([
      [msgs[1], errors.big],
      [msgs[2], errors.odd],
      [msgs[3], errors.halved],
    ]);
    expect(records.map((r) => [r.level, r.msg, r.op])).toEqual([
      [40, "dropped a message that cannot be sent to a client", "big"],
      [50, "dropped a message that cannot be sent to a client", "odd"],
      [30, "a message too large for a client goes again in halves", "halved"],
    ]);
    expect(stream.isClosed).toBe(false);
  });
});
