/**
 * Decoded messages whose strings hold only their own text.
 *
 * msgpackr's native string extraction (msgpackr-extract) decodes the ASCII
 * strings of a message that lie near one another as one string of up to
 * 6,000 bytes (the msgpack headers between them included) and hands out
 * slices of it. V8 makes a slice of 13 characters or more a sliced string,
 * which keeps the whole block alive: a task key of 30 characters kept in a
 * task map, a transition log or a story held the text of the message it came
 * in (264 to 3,528 bytes seen), so that a TCP cluster's long-lived state cost
 * several times that of an in-process one.
 */

/** V8's `SlicedString::kMinLength`: a shorter slice is a copy. */
const SLICED_MIN_LENGTH = 13;

/**
 * `s` in a string of its own, not a slice of a larger one. Joining an array
 * writes its strings' text into a new flat string; `s.slice()`, `String(s)`,
 * `s + ""` and `[s, ""].join("")` return `s` itself, `` ` ${s}`.slice(1) ``
 * is a slice of a copy (36 bytes more a key), and a copy through a `Buffer`
 * or JSON three to five times as much time (this one: 0.1 to 0.2 µs a
 * string in decoding). Exact for any string: it is split between code units.
 */
export function ownString(s: string): string {
  return s.length < SLICED_MIN_LENGTH ? s : [s.charAt(0), s.slice(1)].join("");
}

/** Whether `s` may be a slice that {@link ownString} would copy. */
function mayBeSliced(v: unknown): v is string {
  return typeof v === "string" && v.length >= SLICED_MIN_LENGTH;
}

/**
 * Replace, in place, every string of decoded message `msg` (in arrays, plain
 * objects, `Map` values, `Set`s, errors' messages and causes) by
 * {@link ownString} of it; returns `msg`, or its copy when it is itself a
 * string. Object property names need nothing: V8 interns them, a copy.
 * `Map` keys are copied where the map is decoded (`wireCodec.ts`).
 */
export function ownStrings(msg: unknown): unknown {
  if (mayBeSliced(msg)) return ownString(msg);
  walk(msg);
  return msg;
}

function walk(v: unknown): void {
  if (typeof v !== "object" || v === null) return;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const item = v[i];
      if (typeof item === "object") walk(item);
      else if (mayBeSliced(item)) v[i] = ownString(item);
    }
    return;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto === Object.prototype || proto === null) {
    const rec = v as Record<string, unknown>;
    for (const key in rec) {
      const item = rec[key];
      if (typeof item === "object") walk(item);
      else if (mayBeSliced(item)) rec[key] = ownString(item);
    }
    return;
  }
  if (v instanceof Map) {
    for (const [key, item] of v) {
      if (typeof key === "object") walk(key);
      if (typeof item === "object") walk(item);
      else if (mayBeSliced(item)) v.set(key, ownString(item));
    }
    return;
  }
  if (v instanceof Set) {
    walkSet(v);
    return;
  }
  // Typed arrays, dates, regular expressions, cloned and forwarded values hold
  // no string msgpackr decoded.
  if (v instanceof Error) walkError(v);
}

/** A set's strings replaced, its order kept. */
function walkSet(set: Set<unknown>): void {
  let sliced = false;
  for (const item of set) {
    if (typeof item === "object") walk(item);
    else if (mayBeSliced(item)) sliced = true;
  }
  if (!sliced) return;
  const items = [...set];
  set.clear();
  for (const item of items) set.add(mayBeSliced(item) ? ownString(item) : item);
}

/** An error's message (kept as a task's exception text) and cause. */
function walkError(e: Error): void {
  const message = Object.getOwnPropertyDescriptor(e, "message");
  if (message !== undefined && "value" in message && mayBeSliced(message.value)) {
    Object.defineProperty(e, "message", { ...message, value: ownString(message.value) });
  }
  const cause = Object.getOwnPropertyDescriptor(e, "cause");
  if (cause === undefined || !("value" in cause)) return;
  if (typeof cause.value === "object") walk(cause.value);
  else if (mayBeSliced(cause.value)) {
    Object.defineProperty(e, "cause", { ...cause, value: ownString(cause.value) });
  }
}
