import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { SchedulerCounters } from "../protocol/messagesSession.ts";
import type { Client } from "./client.ts";
import { watchProgress } from "./progress.ts";

class Lines extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString().split("\n").filter(Boolean));
    done();
  }
}

/** A client whose counters are read from `now` (set by the test). */
function fakeClient(now: { finished: number; workers: number }): Client {
  const counters = async (): Promise<SchedulerCounters> => ({
    tasksFinished: now.finished,
    tasksErred: 0,
    tasksDone: now.finished,
    keysTransferred: 0,
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
    const now = { finished: 5, workers: 2 };
    const out = new Lines();
    const watch = await watchProgress(fakeClient(now), 4, {
      stream: out,
      label: "run",
      pollMs: 2,
      lineMs: 0,
    });
    now.finished = 7; // 2 of 4 since the watch began
    await tick(30);
    now.workers = 0;
    await tick(30);
    now.workers = 1;
    now.finished = 9;
    await tick(30);
    await watch.stop();
    expect(watch.done).toBe(4);
    expect(out.lines).toEqual([
      "run: 2/4 tasks (50%)",
      "run: 2/4 tasks (50%): no workers connected, waiting for one",
      "run: 4/4 tasks (100%)",
    ]);
  });

  it("prints 100% once when recomputed tasks take the count past the total", async () => {
    const now = { finished: 0, workers: 2 };
    const out = new Lines();
    const watch = await watchProgress(fakeClient(now), 3, {
      stream: out,
      label: "run",
      pollMs: 2,
      lineMs: 0,
    });
    now.finished = 3;
    await tick(30);
    // A lost worker's tasks computed again: the scheduler's counters go on.
    now.finished = 4;
    await tick(30);
    now.finished = 5;
    await tick(30);
    await watch.stop();
    expect(out.lines).toEqual(["run: 3/3 tasks (100%)"]);
  });
});
