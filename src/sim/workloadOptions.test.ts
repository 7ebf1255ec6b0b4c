/** Options a workload leaves without effect: refused by `weft sim`, left out of the replay command. */

import { expect, test } from "vitest";
import { runWeft } from "../cli/testContext.ts";
import { NO_FAULTS } from "./faults.ts";
import { simulate } from "./simulation.ts";

const weft = (...args: string[]) => runWeft(args);

const SCATTERED_ONLY =
  "acts only on runs with scattered data (the scatter workload, and configured with its config scattered)";

test("weft sim refuses a share of replicate requests for a workload that scatters nothing", async () => {
  for (const [flag, workload] of [
    ["--replicate", "random"],
    ["--replicate-one", "map"],
    ["--rebalance", "mix"],
    ["--retire", "pinned"],
  ] as const) {
    const r = await weft("sim", "--workload", workload, flag, "1", "--tasks", "4");
    expect(r).toMatchObject({ code: 2, out: "" });
    expect(r.err.split("\n")[0]).toBe(
      `error: ${flag} ${SCATTERED_ONLY}, and no ${workload} run has any`,
    );
  }
  // The default workload, unnamed, is named in the refusal.
  const unnamed = await weft("sim", "--replicate", "0");
  expect(unnamed.code).toBe(2);
  expect(unnamed.err.split("\n")[0]).toBe(
    `error: --replicate ${SCATTERED_ONLY}, and no random run has any`,
  );
});

test("weft sim refuses a share of restarts for the scatter workload, whose runs never restart", async () => {
  for (const flag of ["--restart", "--restart-worker"]) {
    const r = await weft("sim", "--workload", "scatter", flag, "1", "--tasks", "4");
    expect(r).toMatchObject({ code: 2, out: "" });
    expect(r.err.split("\n")[0]).toBe(
      `error: ${flag} acts only on runs without scattered data, and every scatter run has some`,
    );
  }
});

test("weft sim takes every share for configured, which scatters its config in some seeds", async () => {
  const r = await weft(
    ...["sim", "--workload", "configured", "--tasks", "6", "--faults", "none"],
    ...["--runs", "3", "--replicate", "1", "--retire", "0.5", "--restart", "1"],
  );
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  const scattered = await weft("sim", "--workload", "scatter", "--tasks", "6", "--replicate", "1");
  expect(scattered.err).toBe("");
  expect(scattered.code).toBe(0);
});

test("the replay command leaves out an option the workload leaves without effect, and replays the run", async () => {
  const base = { seed: 3, tasks: 8, faults: NO_FAULTS };
  const replicating = simulate({ ...base, replicate: 0.9, rebalance: 0.7 });
  expect(replicating.command).toBe("weft sim --seed 3 --tasks 8 --faults none");
  expect(replicating.stats).toEqual(simulate(base).stats);
  const restarting = simulate({ ...base, workload: "scatter", restart: 1, restartWorker: 0.5 });
  expect(restarting.command).toBe("weft sim --seed 3 --workload scatter --tasks 8 --faults none");
  const configured = simulate({ ...base, workload: "configured", replicate: 0.9, restart: 0.2 });
  expect(configured.command).toBe(
    "weft sim --seed 3 --workload configured --tasks 8 --replicate 0.9 --restart 0.2 --faults none",
  );
  for (const r of [replicating, restarting, configured]) {
    const replay = await weft(...r.command.split(" ").slice(1));
    expect(replay.err).toBe("");
    expect(replay.code).toBe(0);
  }
});
