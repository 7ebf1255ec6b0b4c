/**
 * What the walks of a call's values (the argument walk of `submit`, the
 * future searches of `gather`, Variables, Queues, datasets and `logEvent`)
 * read of a `Proxy`, read once, with what its traps throw named. A proxy of
 * an array or a plain object (an immer draft, a reactive store's state) is
 * walked as its contents read through the traps; one whose trap throws was
 * refused with the trap's own error (`Error: trap`), saying neither the call
 * nor where the proxy sat, where every other refusal of a value says both.
 */

import { unreadable } from "./readField.ts";

/**
 * The contents of the proxy `p`: a copy of its items if it is an array's, of
 * its own enumerable fields if a plain object's, else null (not walked into).
 * A TypeError `${where()} cannot be read: …` (its `cause` the trap's error)
 * if a trap throws, or the proxy was revoked.
 */
export function proxyContents(
  p: object,
  where: () => string,
): unknown[] | Record<string, unknown> | null {
  try {
    if (Array.isArray(p)) {
      const items = p as unknown[];
      const n = items.length;
      const out = new Array<unknown>(n);
      for (let i = 0; i < n; i++) out[i] = items[i];
      return out;
    }
    const proto = Object.getPrototypeOf(p);
    if (proto !== Object.prototype && proto !== null) return null;
    const fields = p as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    // defineProperty: an own "__proto__" key stays a key (the walks refuse or keep it).
    for (const k of Object.keys(fields)) {
      Object.defineProperty(out, k, {
        value: fields[k],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  } catch (err) {
    throw unreadable(where(), "a Proxy whose trap threw", err);
  }
}
