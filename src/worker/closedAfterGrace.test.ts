import type { Socket } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { Client } from "../client/client.ts";
import { CommClosedError } from "../comm/errors.ts";
import { TcpComm } from "../comm/tcp.ts";
import { testTls } from "../comm/testTls.ts";
import { Scheduler } from "../scheduler/scheduler.ts";
import { memoryLogger, testWorker } from "./testWorker.ts";

/** Keep the event loop busy for `ms`: a close hung in a synchronous teardown. */
function block(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // spin
  }
}

/**
 * Make every send on this process's connections to `s` fail as a reset one does
 * (a write racing the scheduler's close): the worker's stream to it then fails,
 * both ways. Restored by `vi.restoreAllMocks`.
 */
function failSendsTo(s: Scheduler): void {
  const send = TcpComm.prototype.send;
  vi.spyOn(TcpComm.prototype, "send").mockImplementation(function (this: TcpComm, msg) {
    if (this.peerAddress !== s.address) return send.call(this, msg);
    return Promise.reject(
      new CommClosedError(`connection to ${s.address} failed: write ECONNRESET`),
    );
  });
}

/** A scheduler, its client and a worker, over TLS (or TCP with `useTls` false). */
async function cluster(closeWorkerGraceMs: number, useTls = true) {
  const tls = useTls ? testTls() : undefined;
  const scheme = useTls ? "tls" : "tcp";
  const sched = memoryLogger();
  const s = await Scheduler.start({
    listen: `${scheme}://127.0.0.1:0`,
    tls,
    closeWorkerGraceMs,
    logger: sched.logger,
  });
  const c = await Client.connect(s.address, { tls });
  const { logger, records } = memoryLogger();
  const w = await testWorker(s.address, { listen: `${scheme}://127.0.0.1:0`, tls, logger });
  return {
    s,
    c,
    w,
    records,
    schedulerRecords: sched.records,
    close: async () => {
      vi.restoreAllMocks();
      await c.close();
      await s.close();
    },
  };
}

describe("a worker whose connection to the scheduler is reset", () => {
  it("logs it at error in one line naming the scheduler and the code, the stack at debug", async () => {
    const { s, w, records, close } = await cluster(60_000, false);
    try {
      const stream = s.router.workers.get(w.address);
      if (stream === undefined) throw new Error("the worker is not connected");
      // As the scheduler's process killed with bytes in flight leaves it.
      (stream.comm as unknown as { socket: Socket }).socket.resetAndDestroy();
      await w.closed;
      const broke = records.filter((r) => r.msg === "the stream from the scheduler broke");
      expect(broke).toEqual([
        expect.objectContaining({ level: 50, scheduler: s.address, code: "ECONNRESET" }),
      ]);
      expect(broke[0].err).toBeUndefined();
      const withStack = records.find(
        (r) => r.msg === "the stream from the scheduler broke (the error with its stack)",
      );
      expect(withStack?.level).toBe(20);
    } finally {
      await close();
    }
  });
});

describe("a worker told to close whose connection the scheduler closes", () => {
  it("after the grace, its close hung: says so at info, not as a broken stream at error", async () => {
    const { c, w, records, schedulerRecords, close } = await cluster(100);
    try {
      // Over TLS, the scheduler's close of a connection whose worker was blocked then
      // reaches it as a reset (read ECONNRESET): it was logged at error.
      await w.addPlugin({ teardown: () => block(400) }, "hung");
      await c.retireWorkers([w.address]);
      await w.closed;
      expect(schedulerRecords.map((r) => r.msg)).toContain(
        "a worker told to close still had its connection open after the grace: closed it",
      );
      expect(records.filter((r) => (r.level as number) >= 40)).toEqual([]);
      expect(records.map((r) => r.msg)).toContain(
        "the scheduler closed the connection while this worker, told to close, was still closing",
      );
      expect(w.status).toBe("closed");
      expect(w.fault).toBe(null);
    } finally {
      await close();
    }
  });

  it("as it sends: at info too, and its close is no fault", async () => {
    const { s, c, w, records, close } = await cluster(60_000, false);
    try {
      let tornDown!: () => void;
      await w.addPlugin({ teardown: () => new Promise<void>((r) => (tornDown = r)) }, "slow");
      await c.retireWorkers([w.address]);
      while (w.status !== "closing") await new Promise((r) => setTimeout(r, 5));
      failSendsTo(s);
      w.batchedSend({ op: "keep-alive" });
      while (!records.some((r) => /^cannot send/.test(String(r.msg)))) {
        await new Promise((r) => setTimeout(r, 5));
      }
      tornDown();
      await w.closed;
      expect(records.filter((r) => (r.level as number) >= 40)).toEqual([]);
      expect(records.map((r) => r.msg)).toEqual(
        expect.arrayContaining([
          "cannot send to the scheduler, which closed the connection while this worker, told to close, was still closing",
          "the scheduler closed the connection while this worker, told to close, was still closing",
        ]),
      );
      // A fault made a retired weft worker exit 1, "stopped: cannot send to the scheduler".
      expect(w.fault).toBe(null);
    } finally {
      await close();
    }
  });

  it("not told to close, the same failure is still an error, and a fault, said once", async () => {
    const { s, w, records, close } = await cluster(60_000, false);
    try {
      failSendsTo(s);
      w.batchedSend({ op: "keep-alive" });
      await w.closed;
      // The failed send closes the connection with its error, which the read side then
      // meets: it was logged again, with its stack ("the stream from the scheduler broke").
      expect(records.filter((r) => (r.level as number) >= 50).map((r) => r.msg)).toEqual([
        "cannot send to the scheduler; closing",
      ]);
      expect(w.fault).toMatch(/^cannot send to the scheduler: /);
    } finally {
      await close();
    }
  });
});
