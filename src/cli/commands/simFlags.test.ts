/** The flags `weft sim` names in the simulator's refusals of its options. */

import { expect, test } from "vitest";
import { parseFaults } from "../../sim/faults.ts";
import { resolveSimOptions } from "../../sim/options.ts";
import { testContext } from "../testContext.ts";
import { simCommand } from "./sim.ts";
import { SIM_OPTION_FLAGS, withSimFlags } from "./simFlags.ts";

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected a refusal");
}

test("the API's refusals keep naming its options; the command line's name the flags", () => {
  const api = refusal(() => resolveSimOptions({ seed: 1, workStealingInterval: 0.0001 }));
  expect(api).toMatch(/^workStealingInterval must be at least 0\.001/);
  expect(withSimFlags(api)).toMatch(/^--work-stealing-interval must be at least 0\.001/);
  const rate = refusal(() =>
    resolveSimOptions({ seed: 1, faults: { ...parseFaults("none"), death: -1 } }),
  );
  expect(rate).toMatch(/^faults\.death: /);
  expect(withSimFlags(rate)).toMatch(/^--faults death: /);
});

test("only the opening name is rewritten, and names with no flag are left alone", () => {
  expect(withSimFlags("workers must be at most 10, got 11 (cost grows with workers)")).toBe(
    "--workers must be at most 10, got 11 (cost grows with workers)",
  );
  expect(withSimFlags("heartbeatTimeout must exceed heartbeatInterval")).toBe(
    "heartbeatTimeout must exceed heartbeatInterval",
  );
  expect(withSimFlags("toString must be x")).toBe("toString must be x");
  expect(withSimFlags("latencyX must be")).toBe("latencyX must be");
});

test("every flag of weft sim that sets a simulator option is in the table, and no other", () => {
  const cmd = simCommand(testContext());
  /** Flags that steer the command itself, not a run's options. */
  const commandOnly = ["--runs", "--from", "--no-shrink", "--verbose", "--dump", "--json"];
  // With --workload, these build the workload option (a graph file's), named by its flags.
  commandOnly.push("--graph", "--task-duration", "--task-nbytes");
  const flags = cmd.options.map((o) => o.long).filter((f) => f !== undefined);
  const inTable = Object.values(SIM_OPTION_FLAGS);
  expect(new Set(inTable).size).toBe(inTable.length);
  expect([...inTable].sort()).toEqual(flags.filter((f) => !commandOnly.includes(f)).sort());
});
