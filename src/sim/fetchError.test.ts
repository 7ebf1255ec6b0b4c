/**
 * The fetch-error fault: a gather fails other than on the network
 * (`GatherDepFailureEvent`). The worker errs the keys and reports them
 * `task-erred`, marked `fetchFailed`; the scheduler fails (or retries) the tasks
 * there that needed them, with that error naming the input. The checks accept
 * that outcome, and only that one.
 */

import { describe, expect, test } from "vitest";
import { type CheckInput, checkOutcomes } from "./checks.ts";
import { NO_FAULTS } from "./faults.ts";
import type { SimOptions } from "./options.ts";
import { formatFailure } from "./report.ts";
import { Simulation } from "./simulation.ts";

/** Every gather fails: no task runs on an input from a peer. */
const EVERY_GATHER: Omit<SimOptions, "seed"> = {
  workload: "mix",
  workers: 3,
  tasks: 24,
  faults: { ...NO_FAULTS, "fetch-error": 1 },
};

const UNFETCHABLE = / \(while fetching its input ([^)]+)\)$/;

function checkInputOf(sim: Simulation): CheckInput {
  return sim.checkInput();
}

describe("the fetch-error fault", () => {
  test("with every gather failing, the runs pass: the tasks needing a fetched input err with its error", () => {
    let injected = 0;
    let unfetchable = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const sim = new Simulation({ ...EVERY_GATHER, seed });
      const r = sim.run();
      expect(r.ok, r.ok ? "" : formatFailure(r)).toBe(true);
      injected += r.stats.faults["fetch-error"];
      for (const err of sim.client.errors.values()) {
        if (UNFETCHABLE.test(err.exceptionText)) unfetchable++;
      }
    }
    expect(injected).toBeGreaterThan(0);
    expect(unfetchable).toBeGreaterThan(0);
  });

  test("the checks accept a failed fetch only as the scheduler reports it: injected, naming an input of the blamed task", () => {
    let found: { sim: Simulation; key: string; blame: string; text: string } | null = null;
    for (let seed = 1; found === null && seed <= 20; seed++) {
      const sim = new Simulation({ ...EVERY_GATHER, seed, releasePhase: false });
      expect(sim.run().ok).toBe(true);
      for (const [key, err] of sim.client.errors) {
        if (UNFETCHABLE.test(err.exceptionText)) {
          found = { sim, key, blame: err.blame, text: err.exceptionText };
          break;
        }
      }
    }
    expect(found).not.toBeNull();
    if (found === null) return;
    const { sim, key, blame, text } = found;
    const x = checkInputOf(sim);
    checkOutcomes(x);
    const input = (UNFETCHABLE.exec(text) as RegExpExecArray)[1];
    const injectedText = text.replace(UNFETCHABLE, "");
    const erred = (exceptionText: string, by = blame): void => {
      sim.client.errors.set(key, { blame: by, exceptionText });
    };

    // A fetch error the simulation did not inject.
    erred(text.replace("InjectedError", "DeserializationError"));
    expect(() => checkOutcomes(x)).toThrow(/did not inject/);

    // An injected fetch error, but of a key the blamed task does not take.
    const blamed = sim.workload.tasks[x.index.get(blame) as number];
    const inputs = new Set(blamed.deps.map((d) => sim.workload.tasks[d].key));
    const other = [...sim.injectedFetch].find(([k]) => !inputs.has(k));
    expect(other).toBeDefined();
    if (other === undefined) return;
    const [otherKey, otherTexts] = other;
    erred(`${[...otherTexts][0]} (while fetching its input ${otherKey})`);
    expect(() => checkOutcomes(x)).toThrow(/did not inject/);

    // The fetched key itself blamed for its failed fetch: it did not fail.
    erred(injectedText, input);
    expect(() => checkOutcomes(x)).toThrow(/did not inject/);

    // The injected error, naming something other than the input fetched.
    erred(`${injectedText} (while fetching its input ${"x".repeat(input.length)})`);
    expect(() => checkOutcomes(x)).toThrow(/did not inject/);

    erred(text);
    checkOutcomes(x);
  });
});
