import { describe, expect, it } from "vitest";
import { IdleWatch } from "./idleWatch.ts";
import { SchedulerState } from "./state/schedulerState.ts";
import * as t from "./state/testing.ts";

describe("IdleWatch (Dask's check_idle)", () => {
  it("is idle once nothing has changed and nothing runs, queues or waits for timeoutMs", () => {
    const s = new SchedulerState({ validate: true });
    const watch = new IdleWatch(1_000);
    expect(watch.check(s, 0)).toBe(false); // first look
    expect(watch.check(s, 100)).toBe(false); // idle since 100
    expect(watch.check(s, 1_099)).toBe(false);
    expect(watch.check(s, 1_100)).toBe(true);
    // A task waiting for a worker is work in hand, however long it waits.
    s.handleStimulus(t.updateGraph("c", { x: t.task() }, ["x"]));
    expect(s.tasks.get("x")?.state).toBe("queued");
    for (const now of [2_000, 3_000, 9_000]) expect(watch.check(s, now)).toBe(false);
    // Running: not idle either, even without transitions.
    s.handleStimulus(t.registerWorker("w1"));
    expect(s.tasks.get("x")?.state).toBe("processing");
    for (const now of [10_000, 20_000]) expect(watch.check(s, now)).toBe(false);
    // One that no worker can run (no GPU anywhere) too.
    s.handleStimulus(t.updateGraph("c", { g: t.task([], { resources: { GPU: 1 } }) }, ["g"]));
    expect(s.tasks.get("g")?.state).toBe("no-worker");
    s.handleStimulus(t.taskFinished("w1", "x", 1));
    for (const now of [20_500, 30_000, 40_000]) expect(watch.check(s, now)).toBe(false);
    // Done: a transition, then idle from the next look.
    s.handleStimulus(t.releaseKeys("c", ["g"]));
    expect(watch.check(s, 21_000)).toBe(false);
    expect(watch.check(s, 21_500)).toBe(false);
    expect(watch.check(s, 22_499)).toBe(false);
    expect(watch.check(s, 22_500)).toBe(true);
  });
});
