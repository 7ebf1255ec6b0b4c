/**
 * The shrinker's search, with failures planted by hooks whose conditions are
 * known: it takes every smaller candidate that fails the same way, and none
 * that fails another way.
 */

import { expect, test } from "vitest";
import { FAULT_KINDS, NO_FAULTS } from "./faults.ts";
import type { SimHooks } from "./hooks.ts";
import { shrink } from "./shrink.ts";
import { simulate } from "./simulation.ts";

/** Every computed value is wrong: any run that computes a task fails with wrong-value. */
const alwaysWrong = (): SimHooks => ({ taskValue: (_ctx, _key, correct) => (correct + 1) >>> 0 });

test("a failure every run has shrinks to one worker, one task, one thread and no faults", () => {
  const failing = simulate({ seed: 1, hooks: alwaysWrong() });
  expect(failing.failure?.kind).toBe("wrong-value");
  const s = shrink(failing, { budget: 40, hooks: alwaysWrong });
  const o = s.smallest.options;
  expect(s.smallest.failure?.kind).toBe("wrong-value");
  expect({ workers: o.workers, tasks: o.tasks, maxThreads: o.maxThreads }).toEqual({
    workers: 1,
    tasks: 1,
    maxThreads: 1,
  });
  for (const kind of FAULT_KINDS) expect(o.faults[kind], kind).toBe(0);
});

test("a smaller case that fails another way is not taken", () => {
  // Wrong values with two workers or more; with one, the scheduler never hears a task
  // finish: a deadlock, which is another failure.
  const hooks = (): SimHooks => ({
    ...alwaysWrong(),
    schedulerStimulus: (ctx, ev) =>
      ctx.scheduler.workers.size === 1 &&
      ev.kind === "worker-message" &&
      ev.msg.op === "task-finished"
        ? null
        : ev,
  });
  const failing = simulate({
    seed: 1,
    tasks: 4,
    faults: NO_FAULTS,
    stallTimeout: 5,
    hooks: hooks(),
  });
  expect(failing.failure?.kind).toBe("wrong-value");
  expect(simulate({ ...failing.options, workers: 1, hooks: hooks() }).failure?.kind).toBe(
    "deadlock",
  );
  const s = shrink(failing, { budget: 20, hooks });
  expect(s.smallest.failure?.kind).toBe("wrong-value");
  expect(s.smallest.options.workers).toBe(2);
});

test("a run that passed is refused: there is nothing to shrink", () => {
  const passed = simulate({ seed: 1, tasks: 4, faults: NO_FAULTS });
  expect(passed.ok).toBe(true);
  expect(() => shrink(passed)).toThrow("shrink needs a failing run");
});

test("bad options are refused before any run", () => {
  const failing = simulate({ seed: 1, tasks: 4, faults: NO_FAULTS, hooks: alwaysWrong() });
  expect(failing.ok).toBe(false);
  // A NaN budget tried nothing and said no smaller case failed.
  expect(() => shrink(failing, { budget: Number.NaN, hooks: alwaysWrong })).toThrow(
    new RangeError("budget must be an integer ≥ 0, got NaN"),
  );
  expect(() => shrink(failing, { seedsPerCandidate: 0, hooks: alwaysWrong })).toThrow(
    new RangeError("seedsPerCandidate must be an integer ≥ 1, got 0"),
  );
  // The hooks themselves, not a factory: "o.hooks is not a function" mid-search.
  expect(() => shrink(failing, { hooks: alwaysWrong() as never })).toThrow(
    /^hooks must be a function that makes the run's hooks afresh \(hooks: \(\) => makeHooks\(\)\), got /,
  );
  expect(() => shrink(failing, { budgte: 3, hooks: alwaysWrong } as never)).toThrow(
    new TypeError('shrink: unknown option "budgte" (did you mean budget?)'),
  );
});
