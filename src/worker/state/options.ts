/**
 * The checks `new WorkerState(options)` makes before it builds anything. TypeScript
 * callers get most of them from the types; a JavaScript caller or a configuration file
 * does not, and a bad value would otherwise surface much later, if at all: `nthreads:
 * "4"` is never greater than the number of tasks executing, so nothing would ever run.
 */

import { checkKnownOptions, type OptionNames } from "../../util/knownOptions.ts";
import { isResourceAmount } from "../../util/resourceAmount.ts";
import { showValue } from "../../util/showValue.ts";
import type { WorkerStateOptions } from "./workerState.ts";

function fail(field: string, expected: string, got: unknown): never {
  throw new TypeError(`WorkerState: ${field} must be ${expected}, got ${showValue(got)}`);
}

/** Absent: `null` too, as the constructor's `??` defaults take it. */
function given(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function isNonNegativeInteger(v: unknown): boolean {
  return Number.isSafeInteger(v) && (v as number) >= 0;
}

/** A count: whole and not negative, or infinite. */
function isCount(v: unknown): boolean {
  return isNonNegativeInteger(v) || v === Number.POSITIVE_INFINITY;
}

/** A number of bytes, as the seed's float limits: not negative (infinite allowed), not NaN. */
function isBytes(v: unknown): boolean {
  return typeof v === "number" && v >= 0;
}

function hasMethods(v: unknown, names: readonly string[]): boolean {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return names.every((n) => typeof o[n] === "function");
}

const FUNCTIONS = [
  "clock",
  "monotonic",
  "sizeof",
  "typeName",
  "errorMessage",
  "onPluginError",
] as const;

/**
 * Every option, for refusing a name that is none: the seed's constructor raises a
 * TypeError for an unexpected keyword (`nthraeds=2`, or Dask's `transfer_incoming_count_limit`
 * spelling), where a JavaScript object would drop it and run with the default.
 */
const OPTION_NAMES: OptionNames<WorkerStateOptions> = {
  nthreads: true,
  address: true,
  data: true,
  threads: true,
  plugins: true,
  resources: true,
  transferIncomingCountLimit: true,
  validate: true,
  transitionCounterMax: true,
  transferIncomingBytesLimit: true,
  transferMessageBytesLimit: true,
  clock: true,
  monotonic: true,
  rng: true,
  sizeof: true,
  typeName: true,
  errorMessage: true,
  onPluginError: true,
  chooser: true,
};

/**
 * Throw a TypeError naming an option that is unknown, or the first option that is
 * given (not null) and not of its kind.
 */
export function checkWorkerStateOptions(o: WorkerStateOptions): void {
  if (typeof o !== "object" || o === null || Array.isArray(o)) fail("the options", "an object", o);
  checkKnownOptions("WorkerState", o, OPTION_NAMES);
  if (given(o.nthreads) && !isNonNegativeInteger(o.nthreads)) {
    fail("nthreads", "an integer ≥ 0", o.nthreads);
  }
  if (given(o.address) && typeof o.address !== "string") {
    fail("address", "a string", o.address);
  }
  if (given(o.resources)) {
    const r: unknown = o.resources;
    if (typeof r !== "object" || Array.isArray(r)) fail("resources", "{name: amount}", r);
    const entries = r instanceof Map ? [...r] : Object.entries(r as object);
    for (const [name, amount] of entries) {
      if (typeof name !== "string") fail("resources", "keyed by name", name);
      if (!isResourceAmount(amount)) {
        fail(`resources[${showValue(name)}]`, "a finite number ≥ 0", amount);
      }
    }
  }
  if (given(o.transferIncomingCountLimit) && !isCount(o.transferIncomingCountLimit)) {
    fail("transferIncomingCountLimit", "an integer ≥ 0 or Infinity", o.transferIncomingCountLimit);
  }
  for (const field of ["transferIncomingBytesLimit", "transferMessageBytesLimit"] as const) {
    const v = o[field];
    if (given(v) && !isBytes(v)) fail(field, "a number ≥ 0 (Infinity for no limit)", v);
  }
  const max = o.transitionCounterMax;
  if (given(max) && max !== false && !isNonNegativeInteger(max)) {
    fail("transitionCounterMax", "false or an integer ≥ 0", max);
  }
  if (given(o.validate) && typeof o.validate !== "boolean") {
    fail("validate", "a boolean", o.validate);
  }
  for (const field of FUNCTIONS) {
    const v = o[field];
    if (given(v) && typeof v !== "function") fail(field, "a function", v);
  }
  if (given(o.rng) && !hasMethods(o.rng, ["random"])) {
    fail("rng", "an object with a random() method", o.rng);
  }
  if (given(o.data) && !hasMethods(o.data, ["has", "get", "set", "delete", "keys"])) {
    fail("data", "a Map-like store (has, get, set, delete, keys)", o.data);
  }
  if (given(o.threads) && !(o.threads instanceof Map)) fail("threads", "a Map", o.threads);
  if (given(o.plugins) && !(o.plugins instanceof Map)) fail("plugins", "a Map", o.plugins);
  if (given(o.chooser) && !hasMethods(o.chooser, ["nextRecommendation", "gatherTieBreak"])) {
    fail("chooser", "a WorkerStateChooser", o.chooser);
  }
}
