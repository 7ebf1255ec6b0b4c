/**
 * Random edits of valid inputs, for property tests of decoders: every field (`Map`
 * entry, nested element, a few levels down) of a sample may be set to an odd value or deleted. A
 * decoder given the result must return a value or throw its own error, never a
 * TypeError from deep inside or from building its message.
 */

import fc from "fast-check";

/**
 * Every path to a field, `Map` entry or nested element of `v`, up to `depth` levels
 * down. A step is an object's key or a Map's key (which may be any value).
 */
export function pathsOf(v: unknown, depth = 3, prefix: unknown[] = [], out: unknown[][] = []) {
  if (typeof v === "object" && v !== null && prefix.length < depth) {
    const keys: unknown[] = v instanceof Map ? [...v.keys()] : Object.keys(v);
    for (const k of keys) {
      out.push([...prefix, k]);
      const child = v instanceof Map ? v.get(k) : (v as Record<string, unknown>)[k as string];
      pathsOf(child, depth, [...prefix, k], out);
    }
  }
  return out;
}

/** `d` with the entry at `path` set to `value`, or deleted; copied along the path only. */
export function edited(d: unknown, path: readonly unknown[], value: unknown, remove: boolean) {
  if (typeof d !== "object" || d === null) return d;
  const [k, ...rest] = path;
  if (d instanceof Map) {
    const copy = new Map(d);
    if (rest.length > 0) copy.set(k, edited(copy.get(k), rest, value, remove));
    else if (remove) copy.delete(k);
    else copy.set(k, value);
    return copy;
  }
  const copy = (Array.isArray(d) ? [...d] : { ...d }) as Record<string, unknown>;
  const key = k as string;
  if (rest.length > 0) copy[key] = edited(copy[key], rest, value, remove);
  else if (remove) delete copy[key];
  else copy[key] = value;
  return copy;
}

const cyclic: Record<string, unknown> = {};
cyclic.self = cyclic;

/** Values of every kind JSON and msgpack (with weft's extensions) can and cannot carry. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything(),
  fc.bigInt(),
  fc.double(),
  fc.constantFrom<unknown>(
    null,
    undefined,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    cyclic,
    Object.create(null),
    Symbol("s"),
    () => 1,
    new Map([["a", 1n]]),
    new Map([[1, "w"]]),
  ),
);

/** One of `samples` with one to three random edits, at most `depth` levels down. */
export function editedSample(samples: readonly unknown[], depth = 3): fc.Arbitrary<unknown> {
  return fc
    .tuple(
      fc.nat(),
      fc.array(fc.tuple(fc.nat(), oddValue, fc.boolean()), { minLength: 1, maxLength: 3 }),
    )
    .map(([i, edits]) => {
      let d = samples[i % samples.length];
      for (const [j, value, remove] of edits) {
        const paths = pathsOf(d, depth);
        if (paths.length === 0) break;
        d = edited(d, paths[j % paths.length], value, remove);
      }
      return d;
    });
}
