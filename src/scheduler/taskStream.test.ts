import { describe, expect, it } from "vitest";
import { TaskStream } from "./taskStream.ts";

const run = (key: string, stop: number, op = "task-finished") => ({
  op,
  key,
  runId: 1,
  nbytes: op === "task-finished" ? 8 : undefined,
  startstops: [{ action: "compute", start: stop - 1, stop }],
  stimulusId: "s",
});

describe("TaskStream", () => {
  it("records the runs workers report, the last `length` of them", () => {
    const s = new TaskStream(3);
    s.observe("w1", run("a", 10));
    s.observe("w1", { op: "heartbeat-worker", stimulusId: "h" });
    s.observe("w2", run("b", 11, "task-erred"));
    s.observe("w2", { op: "task-finished" }); // no key: not a run
    s.observe("w1", "not a message");
    expect(s.query()).toEqual([
      {
        key: "a",
        worker: "w1",
        status: "OK",
        nbytes: 8,
        startstops: [{ action: "compute", start: 9, stop: 10 }],
      },
      {
        key: "b",
        worker: "w2",
        status: "error",
        nbytes: null,
        startstops: [{ action: "compute", start: 10, stop: 11 }],
      },
    ]);
    s.observe("w1", run("c", 12));
    s.observe("w1", run("d", 13));
    expect(s.query().map((r) => r.key)).toEqual(["b", "c", "d"]);
  });

  it("answers the runs ending since a time, the last `count` of them", () => {
    const s = new TaskStream(10);
    for (let i = 0; i < 5; i++) s.observe("w", run(`k${i}`, 100 + i));
    expect(s.query({ since: 102 }).map((r) => r.key)).toEqual(["k2", "k3", "k4"]);
    expect(s.query({ count: 2 }).map((r) => r.key)).toEqual(["k3", "k4"]);
    expect(s.query({ since: 101, count: 1 }).map((r) => r.key)).toEqual(["k4"]);
    expect(s.query({ count: 0 })).toEqual([]);
  });

  it("keeps nothing with length 0", () => {
    const s = new TaskStream(0);
    s.observe("w", run("a", 1));
    expect(s.query()).toEqual([]);
  });
});
