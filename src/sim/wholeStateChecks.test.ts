import { afterEach, expect, test, vi } from "vitest";
import { SchedulerState } from "../scheduler/state/schedulerState.ts";
import { NO_FAULTS } from "./faults.ts";
import { graphWorkload } from "./graphWorkload.ts";
import { resolveSimOptions } from "./options.ts";
import { simulate } from "./simulation.ts";
import { variantHooks } from "./variants.ts";
import {
  WHOLE_CHECK_EVERY_STIMULUS_UP_TO,
  WHOLE_CHECK_TASKS_PER_STIMULUS,
  wholeCheckInterval,
} from "./wholeStateChecks.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

/** A chain of `n` tasks: one wanted key, the scheduler holding all `n` to the end. */
function chain(n: number): Record<string, unknown> {
  const graph: Record<string, unknown> = { "c-0": ["load", 0] };
  for (let i = 1; i < n; i++) graph[`c-${i}`] = ["inc", `c-${i - 1}`];
  return graph;
}

const BIG = graphWorkload(chain(3_000));

test("a small run's machines are checked whole after every stimulus, a big run's every size/10", () => {
  const small = WHOLE_CHECK_EVERY_STIMULUS_UP_TO;
  expect(wholeCheckInterval("auto", 40, 44)).toBe(1);
  expect(wholeCheckInterval("auto", small, small + 4)).toBe(1);
  // In a big run, by the machine's size: a worker that holds few tasks after each.
  expect(wholeCheckInterval("auto", small + 1, 3_004)).toBe(
    Math.ceil(3_004 / WHOLE_CHECK_TASKS_PER_STIMULUS),
  );
  expect(wholeCheckInterval("auto", 100_000, 100_004)).toBe(10_001);
  expect(wholeCheckInterval("auto", 100_000, 5)).toBe(1);
  expect(wholeCheckInterval(1, 100_000, 100_004)).toBe(1);
  expect(wholeCheckInterval(7, 40, 44)).toBe(7);
});

test("a big graph's scheduler is not checked whole after every stimulus: the checks of a run of n tasks cost about n, not n²", () => {
  const whole = vi.spyOn(SchedulerState.prototype, "validateState");
  const r = simulate({ seed: 1, workload: BIG, faults: NO_FAULTS });
  expect(r.ok).toBe(true);
  expect(whole.mock.calls.length).toBeGreaterThan(0);
  // Every 301 stimuli while it holds its 3,000 tasks, more often as the release phase
  // forgets them.
  expect(whole.mock.calls.length).toBeLessThan(r.stats.schedulerStimuli / 5);
});

test("validateEvery spaces the whole checks as it says, on a small run too", () => {
  const whole = vi.spyOn(SchedulerState.prototype, "validateState");
  const every = simulate({ seed: 3, faults: NO_FAULTS });
  const each = whole.mock.calls.length;
  expect(each).toBe(every.stats.schedulerStimuli);
  whole.mockClear();
  const spaced = simulate({ seed: 3, faults: NO_FAULTS, validateEvery: 7 });
  expect(spaced.stats.events).toBe(every.stats.events);
  // Every 7th, and once more at the end of each of the two phases at most.
  const n = spaced.stats.schedulerStimuli;
  expect(whole.mock.calls.length).toBeGreaterThanOrEqual(Math.floor(n / 7));
  expect(whole.mock.calls.length).toBeLessThanOrEqual(Math.floor(n / 7) + 2);
  expect(spaced.command).toBe("weft sim --seed 3 --faults none --validate-every 7");
});

test("a big graph's broken state is still caught, and the failure says how to find its stimulus", () => {
  const spaced = simulate({ seed: 1, workload: BIG, variant: "corrupt-occupancy" });
  expect(spaced.failure?.kind).toBe("invalid-state");
  expect(spaced.failure?.message).toMatch(
    /^scheduler: validateState failed after .* \(checked whole (\d+) stimuli before, only the tasks each changed after each: it broke at one of those \1; replay with --validate-every 1 to find which\): AssertionError: .*occupancy/,
  );
  const each = simulate({
    seed: 1,
    workload: BIG,
    variant: "corrupt-occupancy",
    validateEvery: 1,
  });
  expect(each.failure?.kind).toBe("invalid-state");
  expect(each.failure?.message).not.toContain("checked whole");
  expect(each.command).toContain("--validate-every 1");
});

test("a broken state is the failure reported, not the deadlock it led to before its whole check was due", () => {
  const corrupt = variantHooks("corrupt-occupancy");
  let n = 0;
  const r = simulate({
    seed: 1,
    workload: BIG,
    faults: NO_FAULTS,
    stallTimeout: 5,
    hooks: {
      ...corrupt,
      // The scheduler hears nothing after its 20th stimulus: its next check never comes.
      schedulerStimulus: (_ctx, ev) => (++n > 20 ? null : ev),
    },
  });
  expect(r.failure?.kind).toBe("invalid-state");
  expect(r.failure?.message).toMatch(
    /^scheduler: validateState failed before the run failed \((deadlock|livelock): .*\) \(checked whole \d+ stimuli before/,
  );
});

test("validateEvery is auto or an integer ≥ 1", () => {
  expect(resolveSimOptions({ seed: 1 }).validateEvery).toBe("auto");
  expect(resolveSimOptions({ seed: 1, validateEvery: 3 }).validateEvery).toBe(3);
  for (const bad of [0, 1.5, -1, Number.NaN, "5", "always"]) {
    expect(() => resolveSimOptions({ seed: 1, validateEvery: bad as number })).toThrow(
      /^validateEvery must be an integer ≥ 1 \(1: a machine's whole state after every stimulus\) or "auto", got /,
    );
  }
});
