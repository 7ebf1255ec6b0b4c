import { describe, expect, it } from "vitest";
import {
  isReschedule,
  Reschedule,
  runInTask,
  runInTaskSync,
  type TaskRuntime,
} from "./taskContext.ts";

/**
 * Another copy of this module in the thread, as a task module importing the build
 * loads beside the checkout's `weft worker`, which runs the sources.
 */
async function importSecondCopy(): Promise<typeof import("./taskContext.ts")> {
  return (await import(
    /* @vite-ignore */ `./taskContext.ts?second-copy=${Date.now()}`
  )) as typeof import("./taskContext.ts");
}

function runtime(key: string, log: string[]): TaskRuntime {
  return {
    key,
    secede: () => log.push(`secede ${key}`),
    rejoin: async () => {
      log.push(`rejoin ${key}`);
    },
    client: async () => `client of ${key}`,
  };
}

describe("the task context beside another copy of weft", () => {
  it("a task's code that imports another copy finds its task, synchronous or not", async () => {
    const second = await importSecondCopy();
    expect(second.runInTask).not.toBe(runInTask);
    const log: string[] = [];
    // Before, each copy had a context of its own: these threw "must be called from
    // inside a running task" inside a running task.
    expect(runInTaskSync(runtime("s", log), () => second.currentTaskKey())).toBe("s");
    const asyncResult = await runInTask(runtime("a", log), async () => {
      await Promise.resolve();
      second.secede();
      await second.rejoin();
      return [second.currentTaskKey(), await second.taskClient()];
    });
    expect(asyncResult).toEqual(["a", "client of a"]);
    expect(log).toEqual(["secede a", "rejoin a"]);
    expect(() => second.currentTaskKey()).toThrow(/inside a running task/);
  });

  it("a Reschedule of either copy is one", async () => {
    const second = await importSecondCopy();
    expect(second.Reschedule).not.toBe(Reschedule);
    expect(isReschedule(new second.Reschedule())).toBe(true);
    expect(isReschedule(new Reschedule())).toBe(true);
    expect(isReschedule(new Error("Reschedule"))).toBe(false);
    expect(isReschedule({ name: "Reschedule" })).toBe(false);
    const throwing = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error("trap");
        },
      },
    );
    expect(isReschedule(throwing)).toBe(false);
  });
});
