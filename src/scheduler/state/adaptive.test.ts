import { describe, expect, test } from "vitest";
import { adaptiveTarget } from "./adaptive.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

/** `n` independent tasks running `fn`, wanted by client c. */
function tasks(s: SchedulerState, n: number, fn = "f", prefix = "t"): void {
  const graph: Record<string, ReturnType<typeof t.task>> = {};
  for (let i = 0; i < n; i++) graph[`${prefix}${i}`] = t.task([], { fn });
  s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
}

describe("adaptiveTarget", () => {
  test("no work and no workers: none", () => {
    const s = new SchedulerState({ validate: true });
    expect(adaptiveTarget(s, 5)).toBe(0);
  });

  test("tasks waiting with no worker ask for one at least", () => {
    const s = new SchedulerState({ validate: true });
    tasks(s, 3);
    expect(s.unrunnable.size + s.queued.size).toBe(3);
    expect(adaptiveTarget(s, 5)).toBe(1); // 1.5 s of work
    expect(adaptiveTarget(s, 0.5)).toBe(3); // never more than the tasks
  });

  test("tasks no running worker may run ask for no more workers: one like them would not either", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"));
    const graph: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 100; i++) graph[`gpu${i}`] = t.task([], { resources: { GPU: 1 } });
    for (let i = 0; i < 100; i++) graph[`gone${i}`] = t.task([], { workers: ["gone"] });
    s.handleStimulus(t.updateGraph("c", graph, Object.keys(graph)));
    expect(s.unrunnable.size).toBe(200);
    // 100 s of work (0.5 s each, unknown): 20 workers, were they counted.
    expect(adaptiveTarget(s, 5)).toBe(1);
    // With no worker, one is asked for (as Dask does), to see if it may run them.
    s.handleStimulus(t.removeWorker("w1"));
    expect(adaptiveTarget(s, 5)).toBe(1);
    // Tasks any worker may run are counted then (loosely restricted to one gone too).
    const more: Record<string, ReturnType<typeof t.task>> = {};
    for (let i = 0; i < 20; i++) more[`any${i}`] = t.task([], { fn: "g" });
    for (let i = 0; i < 20; i++) {
      more[`loose${i}`] = t.task([], { fn: "g", workers: ["gone"], allowOtherWorkers: true });
    }
    s.handleStimulus(t.updateGraph("c", more, Object.keys(more)));
    // 40 tasks of 0.5 s: 20 s of work, 4 workers in 5 s.
    expect(adaptiveTarget(s, 5)).toBe(4);
  });

  test("threads for the work within the target duration, as workers of the mean size", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1", 2), t.registerWorker("w2", 2));
    s.observeDuration("slow", 2);
    tasks(s, 100, "slow");
    // 200 s of work in 10 s: 20 threads, 10 workers of 2.
    expect(adaptiveTarget(s, 10)).toBe(10);
    // Within 1,000 s: one thread would do, but the busy workers stay.
    expect(adaptiveTarget(s, 1000)).toBe(2);
  });

  test("a few long tasks do not ask for more workers than tasks", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"));
    s.observeDuration("long", 600);
    tasks(s, 2, "long");
    expect(adaptiveTarget(s, 5)).toBe(2);
  });

  test("below the workers there are: less those running nothing; retiring ones are not counted", () => {
    const s = new SchedulerState({ validate: true, workerSaturation: Number.POSITIVE_INFINITY });
    s.handleStimulus(
      t.registerWorker("w1"),
      t.registerWorker("w2"),
      t.registerWorker("w3"),
      t.registerWorker("w4"),
    );
    tasks(s, 1);
    expect(adaptiveTarget(s, 5)).toBe(1);
    s.handleStimulus(
      t.fromClient({ op: "retire-workers", workers: ["w4"], clientId: "c" }, "retire"),
    );
    expect(s.workers.has("w4")).toBe(false); // it held nothing: gone at once
    tasks(s, 40, "f", "u");
    // 20.5 s of work in 5 s: 5 threads wanted, more than the 3 workers left.
    expect(adaptiveTarget(s, 5)).toBe(5);
    expect(() => adaptiveTarget(s, 0)).toThrow(RangeError);
  });

  test("results beyond 60% of the workers' memory limits ask for twice the workers (Dask's memory term)", () => {
    const s = new SchedulerState({ validate: true });
    const register = (address: string, memoryLimit?: number) =>
      t.fromWorker(address, {
        op: "register-worker",
        address,
        nthreads: 1,
        resources: {},
        ...(memoryLimit !== undefined ? { memoryLimit } : {}),
      });
    s.handleStimulus(register("w1", 1000), register("w2", 1000));
    expect(s.workers.get("w1")?.memoryLimit).toBe(1000);
    // 1,100 bytes held: under 60% of 2,000. Idle, with nothing to run: none wanted.
    s.handleStimulus(t.updateData("c", { x: ["w1"] }, "x", 1100));
    // Idle, with nothing to run, but the limits left would not hold twice the results.
    expect(adaptiveTarget(s, 5)).toBe(2);
    s.handleStimulus(t.updateData("c", { y: ["w2"] }, "y", 200));
    // 1,300 bytes: over 1,200.
    expect(adaptiveTarget(s, 5)).toBe(4);
    // A worker without a limit adds nothing to the limits.
    s.handleStimulus(register("w3"));
    expect(adaptiveTarget(s, 5)).toBe(6);
    expect(() => s.handleStimulus(register("w4", -5))).toThrow(
      /memoryLimit must be a positive integer/,
    );
  });

  test("below the workers there are: idle ones given up while those left have twice the memory held (Dask's memory_ratio)", () => {
    const s = new SchedulerState({ validate: true });
    const register = (address: string) =>
      t.fromWorker(address, {
        op: "register-worker",
        address,
        nthreads: 1,
        resources: {},
        memoryLimit: 1000,
      });
    s.handleStimulus(register("w1"), register("w2"), register("w3"), register("w4"));
    // 700 bytes in 4,000 of limits: two workers (2,000) hold twice that, one would not.
    // (Below 60% of one worker's limit, retired down to one, they would ask for two
    // again at the next look, and so on for as long as they are held.)
    s.handleStimulus(t.updateData("c", { x: ["w1"] }, "x", 700));
    expect(adaptiveTarget(s, 5)).toBe(2);
    s.handleStimulus(t.releaseKeys("c", ["x"]));
    expect(adaptiveTarget(s, 5)).toBe(0);
  });

  test("below the workers there are: without memory limits, one is kept while results are held", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    // Retiring both, the last one's retirement would fail (its results could go
    // nowhere), logged and tried again every few looks, for as long as they are held.
    s.handleStimulus(t.updateData("c", { x: ["w1"], y: ["w2"] }, "x", 10));
    expect(adaptiveTarget(s, 5)).toBe(1);
    s.handleStimulus(t.releaseKeys("c", ["x", "y"]));
    expect(adaptiveTarget(s, 5)).toBe(0);
  });

  test("below the workers there are: only those `closable` allows are given up; the others may take the results", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"), t.registerWorker("other"));
    s.handleStimulus(t.updateData("c", { x: ["w1"], y: ["w2"] }, "x", 10));
    const own = (ws: { address: string }) => ws.address !== "other";
    // All idle: the two own ones go, their results moving to the other, which stays.
    expect(adaptiveTarget(s, 5, own)).toBe(1);
    // The other may not be closed: were it the only one allowed, it would be given up.
    expect(adaptiveTarget(s, 5, (ws) => ws.address === "other")).toBe(2);
    expect(adaptiveTarget(s, 5)).toBe(1);
  });

  test("below the workers there are: a worker an actor lives on is not given up (its retirement fails)", () => {
    const s = new SchedulerState({ validate: true });
    s.handleStimulus(t.registerWorker("w1"), t.registerWorker("w2"));
    s.handleStimulus(t.updateGraph("c", { a: t.task([], { actor: true }) }, ["a"]));
    const actorOn = s.tasks.get("a")?.processingOn?.address ?? "";
    s.handleStimulus(t.taskFinished(actorOn, "a", s.tasks.get("a")?.runId ?? 0));
    expect(s.tasks.get("a")?.state).toBe("memory");
    const other = actorOn === "w1" ? "w2" : "w1";
    s.handleStimulus(t.updateGraph("c", { b: t.task([], { workers: [other] }) }, ["b"]));
    expect(s.tasks.get("b")?.processingOn?.address).toBe(other);
    // Counted as idle, the actor's worker asked for a retirement of one worker, which
    // took the busy one (an actor's worker goes last), its task computed again.
    expect(adaptiveTarget(s, 5)).toBe(2);
  });
});
