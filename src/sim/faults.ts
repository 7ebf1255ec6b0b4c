/**
 * The faults the simulator injects, each with its own rate.
 *
 * Rates are probabilities per opportunity (per gather, per execution) or
 * expected occurrences per virtual second (deaths, steals, pauses), as noted
 * on each field.
 */

/** The kinds of fault, in the order they are reported. */
export const FAULT_KINDS = [
  "death",
  "network",
  "busy",
  "slow",
  "fetch-error",
  "error",
  "secede",
  "steal",
  "pause",
  "reschedule",
  "partition",
] as const;

import { parseDecimal } from "../util/decimal.ts";
import { showValue } from "../util/showValue.ts";

/** One kind of fault. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** How often each fault happens; 0 turns a fault off. */
export type FaultRates = Readonly<Record<FaultKind, number>>;

/** How many times slower a link the `slow` fault slows is: drawn uniformly between the two. */
export const SLOW_LINK_FACTOR = { least: 10, most: 100 } as const;

/** What each fault does, for `--help` and the docs. */
export const FAULT_DESCRIPTIONS: Readonly<Record<FaultKind, string>> = {
  death:
    "a worker dies (per cluster per virtual second); its data is gone, the scheduler notices after a heartbeat timeout",
  network: "a peer transfer fails on the network (per gather)",
  busy: "the peer answers busy even below its outgoing limit (per gather)",
  slow: "the link of a transfer is 10-100 times slower (per gather)",
  "fetch-error":
    "a transfer fails otherwise than on the network, as when the data cannot be deserialized (per gather)",
  error: "a task throws (per execution)",
  secede: "a task secedes from its thread part-way (per execution)",
  steal: "the scheduler tries to steal a processing task (per virtual second)",
  pause: "a worker pauses for a while, then resumes (per cluster per virtual second)",
  reschedule: "a task raises Reschedule (per execution)",
  partition:
    "a worker loses its scheduler connection but goes on computing and serving peers until it notices and exits (per cluster per virtual second)",
};

/** Every fault off. */
export const NO_FAULTS: FaultRates = {
  death: 0,
  network: 0,
  busy: 0,
  slow: 0,
  "fetch-error": 0,
  error: 0,
  secede: 0,
  steal: 0,
  pause: 0,
  reschedule: 0,
  partition: 0,
};

/** The default rate of each fault when it is on. */
export const DEFAULT_FAULT_RATES: FaultRates = {
  death: 0.8,
  network: 0.03,
  busy: 0.05,
  slow: 0.05,
  "fetch-error": 0.01,
  error: 0.01,
  secede: 0.03,
  steal: 2,
  pause: 0.5,
  reschedule: 0.01,
  partition: 0.2,
};

/** True for a known fault kind. */
export function isFaultKind(s: string): s is FaultKind {
  return (FAULT_KINDS as readonly string[]).includes(s);
}

/**
 * The faults whose rate is a probability per opportunity (per gather, per
 * execution), so at most 1; the others are Poisson rates per virtual second.
 */
export const PROBABILITY_FAULTS: ReadonlySet<FaultKind> = new Set<FaultKind>([
  "network",
  "busy",
  "slow",
  "fetch-error",
  "error",
  "secede",
  "reschedule",
]);

/** The highest rate (per virtual second) of a fault that comes as a Poisson process. */
export const MAX_FAULT_RATE = 100;

/**
 * What a certainty (probability 1) of these faults does: it leaves no way for a run to
 * finish, so the run fails (deadlock, livelock) without any bug to find.
 */
const HOPELESS_CERTAINTY: Partial<Record<FaultKind, string>> = {
  network:
    "every gather fails on the network: a run whose tasks need another worker's data cannot finish",
  busy: "every peer answers busy: a run whose tasks need another worker's data cannot finish",
  reschedule: "every execution raises Reschedule: no task ever finishes",
};

/** Why `rate` is no rate for fault `kind`, or null when it is one. */
export function faultRateProblem(kind: FaultKind, rate: number): string | null {
  if (!Number.isFinite(rate) || rate < 0) return "expected a number ≥ 0";
  const hopeless = HOPELESS_CERTAINTY[kind];
  if (rate === 1 && hopeless !== undefined) {
    return `a certainty: ${hopeless}; give less than 1`;
  }
  if (PROBABILITY_FAULTS.has(kind))
    return rate > 1 ? "expected a probability between 0 and 1" : null;
  // Faster than this, a run is all faults and ends at maxEvents, telling nothing.
  if (rate > MAX_FAULT_RATE) return `expected at most ${MAX_FAULT_RATE} a second`;
  return null;
}

/** The rate of one `kind=rate` part: the text after `=`, which must be one number. */
function parseRate(kind: FaultKind, text: string): number {
  // Number("") is 0: an empty rate must not turn the fault off unnoticed; nor may a
  // rate too small for a double (1e-400 reads as 0), nor a hexadecimal one.
  const r = parseDecimal(text);
  if (r === 0 && /[1-9]/.test(text.split(/e/i)[0] as string)) {
    throw new Error(
      `bad rate for fault ${kind}: '${text}' (too small to tell from 0, which turns the fault off)`,
    );
  }
  const problem = faultRateProblem(kind, r);
  if (problem !== null) throw new Error(`bad rate for fault ${kind}: '${text}' (${problem})`);
  return r;
}

/** One part of a fault list: `kind` or `kind=rate`. */
function parsePart(part: string): [FaultKind, number] {
  const [name, ...rest] = part.split("=").map((x) => x.trim());
  if (name === "none") {
    throw new Error(`'none' stands alone: it cannot be combined with other faults`);
  }
  if (name === "all") {
    throw new Error(
      "'all' comes first, then the rates that change it (all,slow=0 runs every fault but slow)",
    );
  }
  if (name === "") throw new Error(`empty fault name in '${part}'`);
  if (!isFaultKind(name)) {
    throw new Error(`unknown fault '${name}'; known: ${FAULT_KINDS.join(", ")} (or all, or none)`);
  }
  if (rest.length === 0) return [name, DEFAULT_FAULT_RATES[name]];
  if (rest.length > 1) throw new Error(`bad rate for fault ${name}: '${rest.join("=")}'`);
  return [name, parseRate(name, rest[0])];
}

/**
 * Parse a fault selection: `all`, `none`, or a comma-separated list of kinds,
 * each optionally with a rate (`death,network=0.1`). Listed kinds get their
 * default rate unless given one; unlisted ones are off. `all` may be followed by
 * rates that change it (`all,slow=0`: every fault but slow; `all,death=2`).
 */
export function parseFaults(spec: string): FaultRates {
  // From JavaScript or a config file: said so, rather than "spec.trim is not a function".
  if (typeof spec !== "string") {
    throw new TypeError(
      `parseFaults: the spec must be a string (all, none or kind[=rate],…), got ${showValue(spec)}`,
    );
  }
  const s = spec.trim();
  if (s === "all") return { ...DEFAULT_FAULT_RATES };
  if (s === "none") return { ...NO_FAULTS };
  // As an empty rate: an empty list (`--faults ''`, an unset variable) must not turn
  // every fault off unnoticed.
  if (s === "") throw new Error("empty fault list: give all, none or kind[=rate],…");
  const parts = s.split(",");
  // `all,slow=0`: every fault at its default rate, then the rates that follow.
  const fromAll = parts[0]?.trim() === "all";
  const out: Record<FaultKind, number> = fromAll ? { ...DEFAULT_FAULT_RATES } : { ...NO_FAULTS };
  const seen = new Set<FaultKind>();
  for (const part of fromAll ? parts.slice(1) : parts) {
    const [kind, rate] = parsePart(part);
    // After all, a fault without a rate would change nothing, unsaid.
    if (fromAll && !part.includes("=")) {
      throw new Error(
        `'all' already runs ${kind} at its default rate: after all, give a rate (${kind}=0 leaves it out)`,
      );
    }
    // Two rates for one fault would silently keep the last one.
    if (seen.has(kind)) throw new Error(`fault ${kind} is named twice`);
    seen.add(kind);
    out[kind] = rate;
  }
  return out;
}

/** The inverse of {@link parseFaults}: `all`, `none`, or `kind=rate,…`. */
export function formatFaults(rates: FaultRates): string {
  const on = FAULT_KINDS.filter((k) => rates[k] > 0);
  if (on.length === 0) return "none";
  if (FAULT_KINDS.every((k) => rates[k] === DEFAULT_FAULT_RATES[k])) return "all";
  return on.map((k) => (rates[k] === DEFAULT_FAULT_RATES[k] ? k : `${k}=${rates[k]}`)).join(",");
}

/** A fresh tally of injected faults, all zero. */
export function emptyFaultCounts(): Record<FaultKind, number> {
  return { ...NO_FAULTS };
}
