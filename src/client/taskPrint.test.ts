import { afterEach, describe, expect, it, vi } from "vitest";
import { runInTask, type TaskRuntime } from "../worker/taskContext.ts";
import { print, printedTo, warn } from "./taskPrint.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";
import { printsLines } from "./testTasks.ts";

afterEach(async () => {
  vi.restoreAllMocks();
  await closeTestClusters();
});

/** What is written on stdout and stderr from now on, line by line. */
function capture(): { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const keep = (lines: string[]) => (chunk: unknown) => {
    lines.push(
      ...String(chunk)
        .split("\n")
        .filter((l) => l !== ""),
    );
    return true;
  };
  vi.spyOn(process.stdout, "write").mockImplementation(keep(out) as typeof process.stdout.write);
  vi.spyOn(process.stderr, "write").mockImplementation(keep(err) as typeof process.stderr.write);
  return { out, err };
}

describe("print and warn in tasks (Dask's distributed.print)", () => {
  for (const executor of ["inline", "threads"] as const) {
    it(`a task's lines reach the client's stdout and stderr, in order (${executor})`, async () => {
      const { client } = await testCluster({ workers: 1, executor });
      const { out, err } = capture();
      const future = client.submit(printsLines, 3);
      expect(await future).toBe(3);
      // Already: a task's lines reach the scheduler, and so the client, before its result.
      expect(out).toEqual(["line 0 { i: 0 }", "line 1 { i: 1 }", "line 2 { i: 2 }"]);
      expect(err).toEqual(["careful"]);
      // The scheduler keeps them as events, with the task's key.
      const kept = (await client.getEvents("print")).map(([, m]) => m);
      expect(kept).toEqual(
        [0, 1, 2].map((i) => ({ text: `line ${i} { i: ${i} }`, key: future.key })),
      );
    });
  }

  it("a client made with printTaskOutput: false prints nothing; outside a task, print prints here", async () => {
    await expect(
      (await testCluster({ workers: 0 })).cluster.client({
        printTaskOutput: "yes" as unknown as boolean,
      }),
    ).rejects.toThrow(/^Client option printTaskOutput must be true or false, got .yes.$/);
    const { cluster, client } = await testCluster({ workers: 1 });
    await client.close(); // it would print them
    const quiet = await cluster.client({ printTaskOutput: false });
    const { out, err } = capture();
    expect(await quiet.submit(printsLines, 2)).toBe(2);
    for (let i = 0; (await quiet.getEvents("warn")).length === 0; i++) {
      if (i > 500) throw new Error("the task's warn was never logged");
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(out).toEqual([]);
    expect(err).toEqual([]);
    print("here", 1);
    warn("there");
    expect(out).toEqual(["here 1"]);
    expect(err).toEqual(["there"]);
  });
});

/** A task `key`'s runtime whose client logs events with `logEvent`; what `print` left it to wait for, in `tracked`. */
function taskRuntime(
  key: string,
  logEvent: (topic: string, msg: unknown) => Promise<void>,
): { runtime: TaskRuntime; tracked: Promise<unknown>[] } {
  const tracked: Promise<unknown>[] = [];
  const runtime: TaskRuntime = {
    key,
    secede: () => {},
    rejoin: async () => {},
    client: async () => ({ logEvent }),
    track: (sent) => tracked.push(sent),
  };
  return { runtime, tracked };
}

describe("print and warn, apart from a cluster", () => {
  it("in a task, the task's result waits for the event to be logged", async () => {
    const logged: unknown[] = [];
    let done = (): void => {};
    let asked = (): void => {};
    const logging = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const { runtime, tracked } = taskRuntime("t-1", (topic, msg) => {
      logged.push([topic, msg]);
      asked();
      return new Promise<void>((resolve) => {
        done = resolve;
      });
    });
    await runInTask(runtime, async () => warn("careful", 2));
    expect(tracked).toHaveLength(1);
    let settled = false;
    void tracked[0].then(() => {
      settled = true;
    });
    await logging;
    expect(logged).toEqual([["warn", { text: "careful 2", key: "t-1" }]]);
    expect(settled).toBe(false);
    done();
    await tracked[0];
    expect(settled).toBe(true);
  });

  it("in a task whose client cannot log it, the text is printed here", async () => {
    const { out } = capture();
    const { runtime, tracked } = taskRuntime("t-1", async () => {
      throw new Error("closing");
    });
    await runInTask(runtime, async () => print("lost", 1));
    await tracked[0];
    expect(out).toEqual(["lost 1"]);
    expect(process.stdout.write).toHaveBeenCalledWith("lost 1\n");
  });

  it("a client prints an event that is not a task's message as console.log would", () => {
    const lines: string[] = [];
    const handler = printedTo((text) => lines.push(text));
    handler([0, { text: "plain" }]);
    handler([0, { text: 5 }]);
    handler([0, "a string"]);
    expect(lines).toEqual(["plain", "{ text: 5 }", "a string"]);
  });
});
