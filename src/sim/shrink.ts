/**
 * Shrinking a failing run: look for a smaller configuration (fewer workers,
 * fewer tasks, fewer threads, fewer faults) that fails the same way. Any
 * change of option changes the whole random stream, so each candidate is
 * tried on a few seeds from the original one; the first failing run of the
 * same kind becomes the new case, until no candidate fails or the budget of
 * runs is spent.
 */

import { checkKnownOptions, type OptionNames } from "../util/knownOptions.ts";
import { showValue } from "../util/showValue.ts";
import { FAULT_KINDS } from "./faults.ts";
import type { SimHooks } from "./hooks.ts";
import type { ResolvedSimOptions, SimOptions } from "./options.ts";
import { type SimResult, simulate } from "./simulation.ts";

/** The original failure and the smallest found. */
export interface ShrinkResult {
  /** The run that failed first. */
  readonly original: SimResult;
  /** The smallest run found that fails the same way; the original if none was. */
  readonly smallest: SimResult;
  /** Runs tried. */
  readonly tried: number;
}

/** Limits of the search. */
export interface ShrinkOptions {
  /** Most runs to try. Default 120. */
  budget?: number;
  /** Seeds tried per candidate (the original one, then the next ones). Default 4. */
  seedsPerCandidate?: number;
  /**
   * The failing run's custom hooks (`SimOptions.hooks`), made afresh for each
   * candidate: a run's result does not hold them, and a candidate without them
   * would look for another failure than the hooks' own.
   */
  hooks?: () => SimHooks;
}

type Candidate = Omit<SimOptions, "seed">;

function halve(n: number, min: number): number[] {
  const out = new Set<number>();
  for (const x of [min, Math.floor(n / 2), Math.floor((n * 3) / 4), n - 1]) {
    if (x >= min && x < n) out.add(x);
  }
  return [...out].sort((a, b) => a - b);
}

function candidates(o: ResolvedSimOptions): Candidate[] {
  const { seed: _seed, hooks: _hooks, ...base } = o;
  const out: Candidate[] = [];
  for (const workers of halve(o.workers, 1)) out.push({ ...base, workers });
  // A given workload (a user's graph) is the case under test: its faults, workers
  // and threads shrink, not the graph.
  if (typeof o.workload !== "object") {
    for (const tasks of halve(o.tasks, 1)) out.push({ ...base, tasks });
  }
  for (const kind of FAULT_KINDS) {
    if (o.faults[kind] > 0) out.push({ ...base, faults: { ...o.faults, [kind]: 0 } });
  }
  if (o.maxThreads > 1) out.push({ ...base, maxThreads: 1 });
  return out;
}

/** The size of a case, to compare: workers, tasks, faults on, threads. */
function size(o: ResolvedSimOptions): number {
  const faultsOn = FAULT_KINDS.filter((k) => o.faults[k] > 0).length;
  return o.workers * 1_000_000 + o.tasks * 100 + faultsOn * 10 + o.maxThreads;
}

const OPTION_NAMES: OptionNames<ShrinkOptions> = {
  budget: true,
  seedsPerCandidate: true,
  hooks: true,
};

/**
 * Throws a TypeError or RangeError for options a program got wrong: a NaN budget
 * tried nothing and reported no smaller case, and hooks given as an object rather
 * than a factory failed mid-search as "o.hooks is not a function".
 */
function checkShrinkOptions(o: ShrinkOptions): void {
  checkKnownOptions("shrink", o, OPTION_NAMES);
  if (o.budget !== undefined && !(Number.isSafeInteger(o.budget) && o.budget >= 0)) {
    throw new RangeError(`budget must be an integer ≥ 0, got ${showValue(o.budget)}`);
  }
  const per = o.seedsPerCandidate;
  if (per !== undefined && !(Number.isSafeInteger(per) && per >= 1)) {
    throw new RangeError(`seedsPerCandidate must be an integer ≥ 1, got ${showValue(per)}`);
  }
  if (o.hooks !== undefined && typeof o.hooks !== "function") {
    throw new TypeError(
      `hooks must be a function that makes the run's hooks afresh (hooks: () => makeHooks()), got ${showValue(o.hooks)}`,
    );
  }
}

/**
 * Shrink the failing run `failing` (whose options name any broken variant by
 * `variant`). Throws for a run that passed and for bad options.
 */
export function shrink(failing: SimResult, o: ShrinkOptions = {}): ShrinkResult {
  checkShrinkOptions(o);
  if (failing.ok) throw new Error("shrink needs a failing run");
  if (failing.command.includes("custom hooks") && o.hooks === undefined) {
    throw new Error(
      "shrink: the run failed with custom hooks, which its result does not hold: give them (a factory) as the hooks option",
    );
  }
  const budget = o.budget ?? 120;
  const perCandidate = o.seedsPerCandidate ?? 4;
  const kind = failing.failure?.kind;
  let best = failing;
  let tried = 0;
  let improved = true;
  while (improved && tried < budget) {
    improved = false;
    for (const c of candidates(best.options)) {
      if (tried >= budget) break;
      // The following seeds stop at the largest safe integer (beyond, no seed is valid).
      const seeds = Math.min(perCandidate, Number.MAX_SAFE_INTEGER - best.seed + 1);
      for (let k = 0; k < seeds && tried < budget; k++) {
        const r = simulate({
          ...c,
          seed: best.seed + k,
          ...(o.hooks !== undefined ? { hooks: o.hooks() } : {}),
        });
        tried++;
        if (!r.ok && r.failure?.kind === kind && size(r.options) < size(best.options)) {
          best = r;
          improved = true;
          break;
        }
      }
      if (improved) break;
    }
  }
  return { original: failing, smallest: best, tried };
}
