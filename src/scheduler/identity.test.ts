import { describe, expect, it } from "vitest";
import { connect } from "../comm/connect.ts";
import { rpc } from "../comm/rpc.ts";
import { memoryLogger } from "../worker/testWorker.ts";
import { Scheduler } from "./scheduler.ts";

describe("the scheduler's identity", () => {
  it("answers identity as a first message, with no side effect, then closes the connection", async () => {
    const { logger, records } = memoryLogger();
    const s = await Scheduler.start({
      listen: "tcp://127.0.0.1:0",
      httpAddress: "127.0.0.1:0",
      logger,
    });
    try {
      const comm = await connect(s.address);
      // It was refused as no register-worker or register-client, and logged at error.
      const answer = await rpc(comm).call("identity", {}, { timeoutMs: 10_000 });
      expect(answer).toEqual({
        type: "Scheduler",
        id: s.id,
        address: s.address,
        services: { http: Number(new URL(s.httpUrl as string).port) },
      });
      expect(s.id).toMatch(/^Scheduler-[0-9a-f-]{36}$/);
      await comm.closed;
      expect(s.counters.rejectedMessages).toBe(0);
      expect(s.state.clients.size).toBe(0);
      expect(s.state.workers.size).toBe(0);
      expect(records.filter((r) => (r.level as number) >= 40)).toEqual([]);
      // The HTTP identity says the same ID.
      const http = (await (await fetch(`${s.httpUrl}/json/identity.json`)).json()) as {
        id: unknown;
      };
      expect(http.id).toBe(s.id);
    } finally {
      await s.close();
    }
  });

  it("each scheduler has its own ID", async () => {
    const a = new Scheduler({ listen: "inproc://" });
    const b = new Scheduler({ listen: "inproc://" });
    expect(a.id).not.toBe(b.id);
  });
});
