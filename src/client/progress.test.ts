import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import type { SchedulerCounters } from "../protocol/messagesSession.ts";
import type { Client } from "./client.ts";
import { watchProgress } from "./progress.ts";
import { closeTestClusters, testCluster } from "./testCluster.ts";

afterEach(closeTestClusters);

class Lines extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString().split("\n").filter(Boolean));
    done();
  }
}

/**
 * A client whose counters are read from `now` (set by the test): `done` tasks
 * done, and `finished` reports of them (more when some were recomputed; as many
 * when not given).
 */
function fakeClient(now: { done: number; workers: number; finished?: number }): Client {
  const counters = async (): Promise<SchedulerCounters> => ({
    tasksFinished: now.finished ?? now.done,
    tasksErred: 0,
    tasksDone: now.done,
    keysTransferred: 0,
    stealsRequested: 0,
    stealsConfirmed: 0,
    replicasDropped: 0,
    tasks: 0,
    workers: now.workers,
    clients: 1,
    rejectedMessages: 0,
  });
  return { counters } as unknown as Client;
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("watchProgress (no terminal)", () => {
  it("prints the count as it moves, and says so when no worker is connected", async () => {
    const now = { done: 5, workers: 2 };
    const out = new Lines();
    const watch = await watchProgress(fakeClient(now), 4, {
      stream: out,
      label: "run",
      pollMs: 2,
      lineMs: 0,
    });
    now.done = 7; // 2 of 4 since the watch began
    await tick(30);
    now.workers = 0;
    await tick(30);
    now.workers = 1;
    now.done = 9;
    await tick(30);
    await watch.stop();
    expect(watch.done).toBe(4);
    expect(out.lines).toEqual([
      "run: 2/4 tasks (50%)",
      "run: 2/4 tasks (50%): no workers connected, waiting for one",
      "run: 4/4 tasks (100%)",
    ]);
  });

  it("polls one at a time: a slow answer neither counts back nor prints after the end", async () => {
    // Answers in the order asked take 3 ms to 60 ms; the count at each ask.
    let asks = 0;
    const counters = async (): Promise<SchedulerCounters> => {
      asks++;
      const done = asks === 1 ? 0 : Math.min(asks, 4);
      await tick(asks % 2 === 0 ? 60 : 3);
      return { tasksDone: done, workers: 1 } as SchedulerCounters;
    };
    const out = new Lines();
    const watch = await watchProgress({ counters } as unknown as Client, 4, {
      stream: out,
      pollMs: 1,
      lineMs: 0,
    });
    await tick(150);
    await watch.stop();
    const lineCount = out.lines.length;
    await tick(100);
    expect(out.lines).toHaveLength(lineCount); // nothing after the final line
    const counts = out.lines.map((l) => Number(/: (\d+)\//.exec(l)?.[1]));
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(out.lines.at(-1)).toBe("tasks: 4/4 tasks (100%)");
  });

  it("counts a task recomputed after its worker was lost once", async () => {
    const now = { done: 0, finished: 0, workers: 2 };
    const out = new Lines();
    const watch = await watchProgress(fakeClient(now), 3, {
      stream: out,
      label: "run",
      pollMs: 2,
      lineMs: 0,
    });
    now.done = 2;
    now.finished = 2;
    await tick(30);
    // A lost worker's 2 results computed again: reported finished again, not done again.
    now.finished = 4;
    await tick(30);
    now.done = 3;
    now.finished = 5;
    await tick(30);
    await watch.stop();
    expect(watch.done).toBe(3);
    expect(out.lines).toEqual(["run: 2/3 tasks (66%)", "run: 3/3 tasks (100%)"]);
  });

  it("prints 100% once when other clients' tasks take the count past the total", async () => {
    const now = { done: 0, workers: 2 };
    const out = new Lines();
    const watch = await watchProgress(fakeClient(now), 3, {
      stream: out,
      label: "run",
      pollMs: 2,
      lineMs: 0,
    });
    now.done = 3;
    await tick(30);
    // Another client's tasks done meanwhile: the scheduler's counter goes on.
    now.done = 4;
    await tick(30);
    now.done = 5;
    await tick(30);
    await watch.stop();
    expect(out.lines).toEqual(["run: 3/3 tasks (100%)"]);
  });
});

describe("watchProgress of nothing", () => {
  it("takes a total of 0, and says it is all done", async () => {
    const out = new Lines();
    const watch = await watchProgress(fakeClient({ done: 0, workers: 1 }), 0, {
      stream: out,
      label: "none",
      pollMs: 2,
      lineMs: 0,
    });
    await watch.stop();
    expect(out.lines).toEqual(["none: 0/0 tasks (100%)"]);
  });
});

describe("watchProgress on a cluster", () => {
  it("a worker lost mid-graph: its results computed again count once, done ends at the total", async () => {
    const { cluster, client } = await testCluster({ workers: 3 });
    const graph: Record<string, unknown[]> = {};
    const parts: string[] = [];
    for (let i = 0; i < 12; i++) {
      graph[`p-${i}`] = ["slowInc", i, 30];
      parts.push(`p-${i}`);
    }
    graph.total = ["sum", parts];
    const out = new Lines();
    const watch = await watchProgress(client, 13, { stream: out, pollMs: 5, lineMs: 0 });
    const futures = client.compute(graph, { keys: ["total", "p-0"] });
    await futures["p-0"];
    // The worker holding p-0 goes: p-0 (wanted, and an input of total) is computed again.
    const victim = cluster.workers.find((w) => w.state.data.has("p-0"));
    if (victim === undefined) throw new Error("no worker holds p-0");
    await victim.close();
    expect(await futures.total).toBe(12 + (11 * 12) / 2);
    await watch.stop();
    const counters = await client.counters();
    expect(counters.tasksFinished).toBeGreaterThan(13); // some tasks did finish twice
    expect(counters.tasksDone).toBe(13);
    expect(watch.done).toBe(13);
    expect(out.lines.at(-1)).toBe("tasks: 13/13 tasks (100%)");
  });

  it("says how many of the tasks done erred, those erred because an input did included", async () => {
    const { client } = await testCluster();
    const out = new Lines();
    const watch = await watchProgress(client, 3, { stream: out, pollMs: 5, lineMs: 0 });
    // b errs as its input a did; c is computed.
    const futures = client.compute(
      { a: ["boom", "no"], b: ["inc", "a"], c: ["inc", 1] },
      { keys: ["b", "c"] },
    );
    await expect(futures.b).rejects.toThrow("no");
    expect(await futures.c).toBe(2);
    await watch.stop();
    const counters = await client.counters();
    expect(counters.tasksDone).toBe(3);
    expect(counters.tasksDoneErred).toBe(2);
    expect(out.lines.at(-1)).toBe("tasks: 3/3 tasks (100%), 2 erred");
  });
});
