/** The command line that replays a run: `weft sim --seed N` and every option that differs from its default. */

import { formatFaults } from "./faults.ts";
import { type ResolvedSimOptions, SIM_DEFAULTS } from "./options.ts";

/** Flags of the options that have one, in the order they are printed. */
const FLAGS: readonly [Exclude<keyof ResolvedSimOptions, "seed">, string][] = [
  ["workload", "--workload"],
  ["tasks", "--tasks"],
  ["workers", "--workers"],
  ["maxThreads", "--max-threads"],
  ["outgoingLimit", "--outgoing-limit"],
  ["incomingLimit", "--incoming-limit"],
  ["latency", "--latency"],
  ["variant", "--variant"],
];

/** `weft sim --seed N …`: the command that reruns exactly this run. */
export function replayCommand(o: ResolvedSimOptions): string {
  const parts = ["weft sim", `--seed ${o.seed}`];
  for (const [name, flag] of FLAGS) {
    if (o[name] !== SIM_DEFAULTS[name]) parts.push(`${flag} ${String(o[name])}`);
  }
  const faults = formatFaults(o.faults);
  if (faults !== formatFaults(SIM_DEFAULTS.faults)) parts.push(`--faults ${faults}`);
  if (!o.validate) parts.push("--no-validate");
  if (!o.releasePhase) parts.push("--no-release");
  return parts.join(" ");
}
