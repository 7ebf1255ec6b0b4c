import type { StateMachineEvent } from "../worker/state/events.ts";

/** The task keys an event is about (its key, keys, data, who_has), for stories. */
export function eventKeys(ev: StateMachineEvent): string[] {
  const out = new Set<string>();
  if ("key" in ev) out.add(ev.key);
  if ("keys" in ev) for (const k of ev.keys) out.add(k);
  if ("data" in ev) for (const k of ev.data.keys()) out.add(k);
  if ("whoHas" in ev) for (const k of ev.whoHas.keys()) out.add(k);
  return [...out];
}
