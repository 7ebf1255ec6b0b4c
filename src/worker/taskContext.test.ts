import { describe, expect, it } from "vitest";
import {
  currentTaskKey,
  Reschedule,
  rejoin,
  runInTask,
  runInTaskSync,
  secede,
  type TaskRuntime,
} from "./taskContext.ts";

const noClient = () => Promise.reject(new Error("no client in this test"));

describe("task context", () => {
  it("secede/rejoin/currentTaskKey reach the running task's runtime, across awaits", async () => {
    const calls: string[] = [];
    const rt: TaskRuntime = {
      key: "k1",
      client: noClient,
      secede: () => calls.push("secede"),
      rejoin: async () => {
        calls.push("rejoin");
      },
    };
    await runInTask(rt, async () => {
      expect(currentTaskKey()).toBe("k1");
      secede();
      await new Promise((r) => setTimeout(r, 1));
      await rejoin();
      expect(currentTaskKey()).toBe("k1");
    });
    expect(calls).toEqual(["secede", "rejoin"]);
  });

  it("a synchronous task's runtime is known during the call, without AsyncLocalStorage", () => {
    const calls: string[] = [];
    const rt = (key: string): TaskRuntime => ({
      key,
      client: noClient,
      secede: () => calls.push(`secede ${key}`),
      rejoin: async () => {},
    });
    const got = runInTaskSync(rt("outer"), () => {
      secede();
      // A task run from inside another (nested executors) sees its own runtime.
      const inner = runInTaskSync(rt("inner"), () => currentTaskKey());
      return [inner, currentTaskKey()];
    });
    expect(got).toEqual(["inner", "outer"]);
    expect(calls).toEqual(["secede outer"]);
    expect(() => currentTaskKey()).toThrow(/inside a running task/);
    expect(() =>
      runInTaskSync(rt("boom"), () => {
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(() => currentTaskKey()).toThrow(/inside a running task/);
  });

  it("outside a task they throw", () => {
    expect(() => secede()).toThrow("secede() must be called from inside a running task");
    expect(() => currentTaskKey()).toThrow(/inside a running task/);
  });

  it("after an await in a function that is not async, the error says to declare it async", async () => {
    // The task context of a synchronous function ends when it returns.
    const rt: TaskRuntime = {
      key: "late",
      secede: () => {},
      rejoin: async () => {},
      client: noClient,
    };
    const late = runInTaskSync(rt, () => Promise.resolve().then(() => secede()));
    await expect(late).rejects.toThrow(/must be declared async/);
  });

  it("Reschedule is an Error named Reschedule", () => {
    const r = new Reschedule();
    expect(r).toBeInstanceOf(Error);
    expect(r.name).toBe("Reschedule");
  });
});
