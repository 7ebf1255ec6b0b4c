import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { Scheduler } from "../../scheduler/scheduler.ts";
import { runWeft } from "../testContext.ts";

const REFUSAL =
  "no scheduler of this process is at inproc://nobody/1: an inproc:// address reaches only one in the same process; give the scheduler's tcp:// (or tls://) address\n";

describe("an inproc:// scheduler address on the command line", () => {
  it("that no listener of this process has is refused at once (exit 2), not waited for", async () => {
    // They waited the whole --connect-timeout (a worker until stopped), then said "still refused".
    const timeout = ["--connect-timeout", "2000"];
    expect(await runWeft(["status", "inproc://nobody/1", ...timeout])).toEqual({
      code: 2,
      out: "",
      err: `weft status: ${REFUSAL}`,
    });
    expect(
      await runWeft(["run", "graph.json", "--scheduler", "inproc://nobody/1", ...timeout]),
    ).toEqual({ code: 2, out: "", err: `weft run: ${REFUSAL}` });
    const worker = ["worker", "inproc://nobody/1", ...timeout, "--death-timeout", "2000"];
    expect(await runWeft([...worker, "--listen", "tcp://127.0.0.1:0"])).toEqual({
      code: 2,
      out: "",
      err: `weft worker: cannot start: ${REFUSAL}`,
    });
  });

  it("that a scheduler of this process listens at is served", async () => {
    const scheduler = await Scheduler.start({
      listen: "inproc://",
      logger: pino({ level: "silent" }),
    });
    try {
      const r = await runWeft(["status", scheduler.address]);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
    } finally {
      await scheduler.close();
    }
  });
});
