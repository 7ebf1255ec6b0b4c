import { describe, expect, it } from "vitest";
import type { PeerPool } from "../worker/peerPool.ts";
import { RunError } from "./errors.ts";
import { runAnswer, runOnWorkers } from "./runOnWorkers.ts";

describe("runAnswer", () => {
  it("reads a value, or a failure with its traceback", () => {
    expect(runAnswer("tcp://a:1", { status: "OK", value: 3 }, "run")).toBe(3);
    const failed = runAnswer(
      "tcp://a:1",
      { status: "error", error: { exceptionText: "ValueError: no", tracebackText: "at f" } },
      "run",
    );
    expect(failed).toBeInstanceOf(RunError);
    expect(failed).toMatchObject({
      worker: "tcp://a:1",
      exceptionText: "ValueError: no",
      tracebackText: "at f",
    });
  });

  it("calls any other answer malformed, showing it, even one carrying an error", () => {
    const odd = { status: "busy", error: { exceptionText: "ValueError: no" } };
    const got = runAnswer("tcp://a:1", odd, "run-on-scheduler") as RunError;
    expect(got).toBeInstanceOf(RunError);
    expect(got.exceptionText).toBe(`malformed answer to run-on-scheduler: ${JSON.stringify(odd)}`);
    expect((runAnswer("tcp://a:1", null, "run") as RunError).exceptionText).toBe(
      "malformed answer to run: null",
    );
  });
});

describe("runOnWorkers", () => {
  it("a worker that cannot be asked fails with its error's message", async () => {
    const peers = {
      get: async () => {
        throw new Error("no route to tcp://a:1");
      },
    } as unknown as PeerPool;
    const got = await runOnWorkers(peers, ["tcp://a:1"], "client-1", "inc", [1], "return");
    expect(got["tcp://a:1"]).toBeInstanceOf(RunError);
    expect(got["tcp://a:1"]).toMatchObject({ exceptionText: "no route to tcp://a:1" });
  });
});
