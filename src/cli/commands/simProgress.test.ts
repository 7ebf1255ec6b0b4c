import { expect, test } from "vitest";
import { NO_FAULTS } from "../../sim/faults.ts";
import { graphWorkload } from "../../sim/graphWorkload.ts";
import { Simulation } from "../../sim/simulation.ts";
import { tasksDone } from "./simProgress.ts";

test("the bar of a graph reduced to one result counts its tasks, not its one wanted key", () => {
  // A chain: one wanted key, its end, which the client holds only as the run ends.
  const graph: Record<string, unknown> = { "c-0": ["load", 0] };
  for (let i = 1; i < 3_000; i++) graph[`c-${i}`] = ["inc", `c-${i - 1}`];
  const sim = new Simulation({
    seed: 1,
    workload: graphWorkload(graph),
    faults: NO_FAULTS,
    validate: false,
  });
  const seen: [number, number][] = [];
  const r = sim.run(() => seen.push(tasksDone(sim)));
  expect(r.ok).toBe(true);
  // Several updates along the way (one every 4,096 events), each of the 3,000 tasks.
  expect(seen.length).toBeGreaterThan(3);
  for (const [, total] of seen) expect(total).toBe(3_000);
  const done = seen.map(([d]) => d);
  // It moves while the run goes on, never back, never past the whole.
  expect(done.filter((d) => d > 0 && d < 3_000).length).toBeGreaterThan(1);
  for (let i = 1; i < done.length; i++) expect(done[i]).toBeGreaterThanOrEqual(done[i - 1]);
  expect(tasksDone(sim)).toEqual([3_000, 3_000]);
});
