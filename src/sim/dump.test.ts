/**
 * A simulated run's dump (`weft sim --dump`) replays exactly: each worker's
 * state machine, rebuilt from its dumped stimulus log, makes the transitions
 * its dumped log holds and ends as it was dumped (faults, actors and
 * scattered data included).
 */
import { Packr } from "msgpackr";
import { expect, test } from "vitest";
import { parseClusterDump } from "../protocol/clusterDump.ts";
import { formatReport } from "../replay/formatReport.ts";
import { replayLoadedDump } from "../replay/replayDump.ts";
import { simDump } from "./dump.ts";
import type { SimOptions } from "./options.ts";
import { Simulation } from "./simulation.ts";

function replayed(options: SimOptions): { ok: boolean; workers: number; notExact: string[] } {
  const sim = new Simulation(options);
  sim.run();
  const bytes = new Packr({ useRecords: false, variableMapSize: true }).pack(simDump(sim));
  const dump = parseClusterDump(bytes, `seed-${options.seed}.msgpack`);
  const { report } = replayLoadedDump(dump);
  return {
    ok: report.ok,
    workers: report.workers.length,
    notExact: report.workers
      .filter((w) => !w.ok)
      .map(
        (w) =>
          `${w.address}: ${JSON.stringify({ counter: w.transitionCounter, failure: w.failure?.message })}`,
      ),
  };
}

test.each([
  ["random", 0.2],
  ["mix", 0.3],
  ["scatter", 0.2],
  ["shuffle", 0.1],
] as const)("the dumps of %s runs (actors %s) replay exactly", (workload, actors) => {
  for (let seed = 1; seed <= 8; seed++) {
    // A shuffle of 40 partitions is 1,600 transfers: 8 keep the test short.
    const tasks = workload === "shuffle" ? 8 : 40;
    const r = replayed({ seed, workload, actors, tasks });
    expect(r.notExact, `seed ${seed}`).toEqual([]);
    expect(r.workers).toBeGreaterThan(0);
  }
});

test("a weft dump has no distributed version: the replay report names none", () => {
  const sim = new Simulation({ seed: 1, tasks: 5 });
  sim.run();
  const bytes = new Packr({ useRecords: false, variableMapSize: true }).pack(simDump(sim));
  const { report } = replayLoadedDump(parseClusterDump(bytes, "weft.msgpack"));
  expect(report.distributed).toBeNull();
  expect(formatReport(report).split("\n")[0]).toMatch(
    /^weft\.msgpack: cluster dump \(msgpack\), \d+ workers? replayed$/,
  );
});
