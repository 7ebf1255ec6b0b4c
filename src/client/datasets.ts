/**
 * How a published dataset travels to the scheduler and back to a client: the
 * value with its futures taken out (`null` in their place) and structured-cloned
 * as task values are, with the place and key of each future. The scheduler
 * keeps this as it is; a client getting it puts futures of its own back in.
 */

import { ClonedValue } from "../comm/clonedValue.ts";
import { setOwnKey } from "../util/ownKey.ts";
import { showValue } from "../util/showValue.ts";
import { DatasetError } from "./errors.ts";
import { Future } from "./future.ts";
import { type PathStep, replaceFutures, searchFutures } from "./futureSearch.ts";
import { dataCopy, receivedCopy } from "./wireCopy.ts";

/** Where a future was in the value published, and its key. */
interface Slot {
  readonly steps: readonly PathStep[];
  readonly key: string;
}

/** What the scheduler keeps of a dataset's value. */
interface EncodedDataset {
  readonly value: unknown;
  readonly slots: readonly Slot[];
}

/** A TypeError unless `name` is a non-empty string. */
export function checkDatasetName(op: string, name: unknown): void {
  if (typeof name !== "string" || name === "") {
    throw new TypeError(`${op}: the name must be a non-empty string, got ${showValue(name)}`);
  }
}

/**
 * `value` as a dataset: its futures' keys (each once) and what the scheduler
 * keeps. Futures are searched as `gather` searches them (arrays and plain
 * objects); `check` may refuse one by throwing. A value that cannot be cloned
 * (a function, a symbol), and a future alone, which `getDataset` could only
 * resolve with its result, are refused with a TypeError naming `what`.
 */
export function encodeDataset(
  value: unknown,
  check: (f: Future) => void,
  what = "publishDataset",
): { keys: string[]; data: ClonedValue } {
  if (value instanceof Future) {
    throw new TypeError(
      `${what}: a future alone would be got as its result (futures are thenables): publish [future] or { future }`,
    );
  }
  const slots: Slot[] = [];
  searchFutures(value, what, (f, steps) => {
    check(f);
    slots.push({ steps: [...steps], key: f.key });
  });
  // A copy now: in process the scheduler keeps what it is given, and the caller may change it.
  const cloned = dataCopy(
    what,
    replaceFutures(value, () => null),
  );
  const encoded: EncodedDataset = { value: cloned, slots };
  return { keys: [...new Set(slots.map((slot) => slot.key))], data: new ClonedValue(encoded) };
}

function isEncodedDataset(v: unknown): v is EncodedDataset {
  if (typeof v !== "object" || v === null || !("slots" in v) || !Array.isArray(v.slots)) {
    return false;
  }
  return v.slots.every(
    (slot: unknown) =>
      typeof slot === "object" &&
      slot !== null &&
      "key" in slot &&
      typeof slot.key === "string" &&
      "steps" in slot &&
      Array.isArray(slot.steps) &&
      slot.steps.every((step: unknown) => typeof step === "string" || typeof step === "number"),
  );
}

/**
 * The value of a dataset as {@link encodeDataset} made it, with a future from
 * `futureOf(key)` in each place a future was, and those futures. A
 * `DatasetError` if it is malformed.
 */
export function decodeDataset(
  name: string,
  data: unknown,
  futureOf: (key: string) => Future,
): { value: unknown; futures: Future[] } {
  const encoded = ClonedValue.unwrap(data);
  const malformed = (): DatasetError =>
    new DatasetError(`getDataset: the scheduler sent a malformed dataset ${JSON.stringify(name)}`);
  if (!isEncodedDataset(encoded)) throw malformed();
  // In process the scheduler's copy is shared by every client getting it.
  let value = receivedCopy(encoded.value);
  // Every place first, so that a malformed dataset makes no future.
  const parents = encoded.slots.map(({ steps }) => {
    if (steps.length === 0) return null;
    let at: unknown = value;
    for (let i = 0; i < steps.length - 1; i++) {
      if (typeof at !== "object" || at === null) throw malformed();
      at = (at as Record<PathStep, unknown>)[steps[i]];
    }
    if (typeof at !== "object" || at === null) throw malformed();
    return at;
  });
  const futures: Future[] = [];
  encoded.slots.forEach(({ steps, key }, i) => {
    const f = futureOf(key);
    futures.push(f);
    const parent = parents[i];
    if (parent === null) {
      value = f;
      return;
    }
    // Defined, not assigned: an own "__proto__" key stays a key.
    setOwnKey(parent, steps[steps.length - 1] as PathStep, f);
  });
  return { value, futures };
}
