import { describe, expect, it, vi } from "vitest";
import { startTask } from "./runTask.ts";
import { TASK_CONTEXT_MODULE, trackTaskMessage } from "./taskContext.ts";
import { frameLocations, withoutRunnerFrames } from "./taskFrames.ts";
import { defineTask } from "./taskRegistry.ts";

const hooks = {
  secede: () => {},
  rejoin: async () => {},
  client: () => Promise.reject(new Error("no client in this test")),
};

/** A message a task sends, settled by the test. */
function message(): { sent: Promise<void>; arrive: () => void } {
  let arrive!: () => void;
  const sent = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  return { sent, arrive };
}

describe("a task's result waits for the messages it sent (print)", () => {
  for (const kind of ["synchronous", "async"] as const) {
    it(`${kind}: reported once they have settled, with its own timing`, async () => {
      const m = message();
      const name = `runTask.sends.${kind}`;
      defineTask(
        name,
        kind === "synchronous"
          ? () => {
              trackTaskMessage(m.sent);
              return 5;
            }
          : async () => {
              trackTaskMessage(m.sent);
              return 5;
            },
      );
      const out = startTask({ key: "k", fn: name, args: [] }, hooks);
      expect(out).toBeInstanceOf(Promise);
      let done = false;
      void (out as Promise<unknown>).then(() => {
        done = true;
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(done).toBe(false);
      m.arrive();
      const outcome = await out;
      expect(outcome).toMatchObject({ status: "ok", value: 5 });
      // Its compute time does not include the wait.
      expect(outcome.stop - outcome.start).toBeLessThan(0.15);
    });
  }

  it("a message that never settles holds the result 5 s at most", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      defineTask("runTask.sends.never", () => {
        trackTaskMessage(new Promise<void>(() => {}));
        return 7;
      });
      const out = startTask({ key: "k", fn: "runTask.sends.never", args: [] }, hooks);
      expect(out).toBeInstanceOf(Promise);
      let done = false;
      void (out as Promise<unknown>).then(() => {
        done = true;
      });
      await vi.advanceTimersByTimeAsync(4_999);
      expect(done).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(done).toBe(true);
      expect(await out).toMatchObject({ status: "ok", value: 7 });
    } finally {
      vi.useRealTimers();
    }
  });

  it("a task that sends nothing costs nothing: a synchronous one's outcome comes at once", () => {
    defineTask("runTask.silent", () => 1);
    const out = startTask({ key: "k", fn: "runTask.silent", args: [] }, hooks);
    expect(out).not.toBeInstanceOf(Promise);
    expect(out).toMatchObject({ status: "ok", value: 1 });
  });
});

describe("a task's traceback: its own frames, not weft's below them", () => {
  function fails(): never {
    throw new Error("no");
  }
  const cases = {
    synchronous: () => fails(),
    "async, before awaiting": async () => fails(),
    "async, after awaiting": async () => {
      await new Promise((r) => setTimeout(r, 1));
      fails();
    },
  };
  for (const [kind, fn] of Object.entries(cases)) {
    it(`${kind}: cut below the task function`, async () => {
      defineTask(`runTask.fails.${kind}`, fn);
      const outcome = await startTask({ key: "k", fn: `runTask.fails.${kind}`, args: [] }, hooks);
      const { tracebackText, stack } = (
        outcome as { error: { tracebackText: string; stack: string } }
      ).error;
      const frames = tracebackText.split("\n");
      expect(frames[0]).toMatch(/^ {4}at fails \(.*runTask\.test\.ts:\d+:\d+\)$/);
      expect(frames.every((f) => f.includes("runTask.test.ts"))).toBe(true);
      expect(stack).toBe(`Error: no\n${tracebackText}`);
    });
  }

  it("keeps the frames of weft's APIs the task called, above its own", async () => {
    const outside = [
      "Error: no",
      "    at rejoin (file:///weft/worker/taskContext.js:1:1)",
      "    at userTask (file:///app/tasks.js:3:5)",
      "    at runInTaskSync (file:///weft/worker/taskContext.js:9:9)",
      "    at startTask (file:///weft/worker/runTask.js:5:5)",
      "    at InlineExecutor.run (file:///weft/worker/inlineExecutor.js:7:7)",
    ].join("\n");
    const runner = frameLocations([
      "file:///weft/worker/runTask.js",
      "file:///weft/worker/taskContext.js",
    ]);
    expect(withoutRunnerFrames(outside, runner)).toBe(outside.split("\n").slice(0, 3).join("\n"));
    // None of the task's own: nothing is left but the header.
    const around = ["Error: no", ...outside.split("\n").slice(4)].join("\n");
    expect(withoutRunnerFrames(around, runner)).toBe("Error: no");
    // This module's frames are found under its path as well as its URL.
    expect(frameLocations([TASK_CONTEXT_MODULE])).toHaveLength(2);
  });

  it("an unknown task function has no frame: all of them were weft's", async () => {
    const outcome = startTask({ key: "k", fn: "runTask.neverDefined", args: [] }, hooks);
    expect(outcome).toMatchObject({ status: "error", error: { tracebackText: "" } });
    const { stack } = (outcome as { error: { stack: string } }).error;
    expect(stack).toMatch(
      /^UnknownTaskFunctionError: unknown task function "runTask\.neverDefined"/,
    );
    expect(stack).not.toMatch(/\n\s+at /);
  });

  it("a result that is not data fails with weft's error, none of whose frames is the task's", async () => {
    class Vec {
      x = 1;
    }
    defineTask("runTask.returnsVec", () => new Vec());
    const outcome = startTask({ key: "k", fn: "runTask.returnsVec", args: [] }, hooks);
    expect(outcome).toMatchObject({ status: "error", error: { tracebackText: "" } });
    const { stack } = (outcome as { error: { stack: string } }).error;
    expect(stack).toMatch(/^DataCloneError: result of .* cannot be cloned: result is a Vec/);
    expect(stack).not.toMatch(/\n\s+at /);
  });

  it("an error of no frames keeps an empty traceback", async () => {
    defineTask("runTask.frameless", () => {
      const err = new Error("bare");
      err.stack = "Error: bare";
      throw err;
    });
    const outcome = startTask({ key: "k", fn: "runTask.frameless", args: [] }, hooks);
    expect(outcome).toMatchObject({
      status: "error",
      error: { tracebackText: "", stack: "Error: bare" },
    });
  });
});
