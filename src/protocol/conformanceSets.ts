import { setOwnKey } from "../util/ownKey.ts";
import { type Dict, isDict } from "./daskJson/fields.ts";
import { compareCodePoints } from "./daskJson/instructions.ts";

/*
 * FORMAT.md writes the seed's sets as sorted lists, so that a snapshot is deterministic;
 * it does not make their order part of the contract. A recording of keys that were tuples
 * in Python (written as their `str()`) may have sorted them as tuples, in which
 * `('x', 9)` comes before `('x', 10)`, while the port sorts the strings. These functions
 * re-sort the set-valued fields of a recorded step by code point, as the port's dicts
 * have them, so that both sides compare as sets. Lists in pop order (`ready`,
 * `constrained`) and priorities keep their order.
 */

/** State fields holding a set of keys or workers. */
const STATE_SETS = [
  "waiting",
  "executing",
  "long_running",
  "in_flight_tasks",
  "missing_dep_flight",
  "busy_workers",
  "data",
  "actors",
] as const;
/** State fields mapping a worker to a set of keys. */
const STATE_SET_MAPS = ["in_flight_workers", "data_needed", "has_what"] as const;
/** Task fields holding a set of keys or workers. */
const TASK_SETS = ["who_has", "dependencies", "dependents", "waiting_for_data", "waiters"] as const;
/** Instruction fields holding a set of keys. */
const INSTRUCTION_SETS = ["to_gather", "keys"] as const;

function sortedCopy(v: unknown): unknown {
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) return v;
  return [...v].sort(compareCodePoints);
}

/** A copy of `d` with the lists in `fields` sorted. */
function withListsSorted(d: Dict, fields: readonly string[]): Dict {
  const out: Dict = { ...d };
  for (const f of fields) if (f in d) out[f] = sortedCopy(d[f]);
  return out;
}

/** A copy of a recorded state snapshot with its sets sorted by code point. */
export function stateWithSetsSorted(state: Dict): Dict {
  const out = withListsSorted(state, STATE_SETS);
  for (const f of STATE_SET_MAPS) {
    const m = state[f];
    if (!isDict(m)) continue;
    const sorted: Dict = {};
    for (const [w, keys] of Object.entries(m)) setOwnKey(sorted, w, sortedCopy(keys));
    out[f] = sorted;
  }
  const tasks = state.tasks;
  if (isDict(tasks)) {
    const sorted: Dict = {};
    for (const [k, ts] of Object.entries(tasks)) {
      setOwnKey(sorted, k, isDict(ts) ? withListsSorted(ts, TASK_SETS) : ts);
    }
    out.tasks = sorted;
  }
  return out;
}

/** A recorded instruction with its sets of keys sorted by code point. */
export function instructionWithSetsSorted(instruction: Dict): Dict {
  return withListsSorted(instruction, INSTRUCTION_SETS);
}
