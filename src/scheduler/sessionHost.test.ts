import { describe, expect, it } from "vitest";
import type { Comm } from "../comm/comm.ts";
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
});
