/**
 * The totals of the metrics a worker digests (the time and bytes of each
 * activity of its instructions, which `BaseWorker` names), for the worker's
 * `metrics`. Apart from the worker because the keying is a small
 * performance concern of its own: it runs once per task and metric.
 */

import type { MetricName } from "./baseWorker.ts";

/** Running totals by metric name. */
export class MetricTotals {
  /** `{name joined by NUL: [name, total]}`: cheaper to key than JSON, once per task and metric. */
  private readonly byKey = new Map<string, [MetricName, number]>();
  /** The same entries by (frozen, interned) name array. */
  private readonly byName = new Map<MetricName, [MetricName, number]>();

  /** Add `value` to the total of `name`. */
  add(name: MetricName, value: number): void {
    // BaseWorker interns its names: most calls are found by identity.
    const known = this.byName.get(name);
    if (known !== undefined) {
      known[1] += value;
      return;
    }
    let key = "";
    for (const part of name) key += part === null ? "\u0001\u0000" : `${part}\u0000`;
    let entry = this.byKey.get(key);
    if (entry === undefined) {
      entry = [name, value];
      this.byKey.set(key, entry);
    } else {
      entry[1] += value;
    }
    if (Object.isFrozen(name)) this.byName.set(name, entry);
  }

  /** The totals so far, by the name as JSON. */
  toMap(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [name, total] of this.byKey.values()) out.set(JSON.stringify(name), total);
    return out;
  }
}
