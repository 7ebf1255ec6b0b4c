/** The command line that replays a run: `weft sim --seed N` and every option that differs from its default. */

import { formatFaults } from "./faults.ts";
import { type ResolvedSimOptions, SIM_DEFAULTS } from "./options.ts";
import { withoutEffect } from "./workloadOptions.ts";

/** Flags of the options that have one, in the order they are printed. */
const FLAGS: readonly [Exclude<keyof ResolvedSimOptions, "seed">, string][] = [
  ["workload", "--workload"],
  ["tasks", "--tasks"],
  ["workers", "--workers"],
  ["maxThreads", "--max-threads"],
  ["outgoingLimit", "--outgoing-limit"],
  ["incomingLimit", "--incoming-limit"],
  ["latency", "--latency"],
  ["bandwidth", "--bandwidth"],
  ["replicate", "--replicate"],
  ["replicateOne", "--replicate-one"],
  ["rebalance", "--rebalance"],
  ["retire", "--retire"],
  ["fireAndForget", "--fire-and-forget"],
  ["restart", "--restart"],
  ["restartWorker", "--restart-worker"],
  ["actors", "--actors"],
  ["variant", "--variant"],
];

/**
 * Options `weft sim` has no flag for (set only from a program). One that differs from
 * its default is named after the command, in parentheses, so that the line does not
 * pass for the replay of a run it is not (and fails in a shell instead of running
 * another case).
 */
const NO_FLAG: readonly Exclude<keyof ResolvedSimOptions, "seed" | "hooks">[] = [
  "heartbeatInterval",
  "heartbeatTimeout",
  "findMissingInterval",
  "retryBusyDelay",
  "replaceDelay",
  "allowedFailures",
  "stallTimeout",
  "maxEvents",
  "maxTime",
];

/**
 * `weft sim --seed N …`: the command that reruns exactly this run (without the options
 * its workload leaves without effect, see workloadOptions.ts). `customHooks`:
 * the run had hooks of its own (not a variant's), which no command line can give.
 */
export function replayCommand(o: ResolvedSimOptions, customHooks = false): string {
  const parts = ["weft sim", `--seed ${o.seed}`];
  const extra: string[] = [];
  const given = typeof o.workload === "object" ? o.workload : null;
  // A graph's flags build it again; a program's own workload no flag can give.
  if (given?.flags !== undefined) parts.push(given.flags);
  else if (given !== null) extra.push(`workload=${given.name} (a program's)`);
  for (const [name, flag] of FLAGS) {
    // A given workload has its own tasks and actors: its options only repeat them.
    if (given !== null && (name === "workload" || name === "tasks" || name === "actors")) continue;
    // An option the workload leaves without effect replays the same run left out, and
    // `weft sim` refuses its flag.
    if (o[name] !== SIM_DEFAULTS[name] && !withoutEffect(o.workload, name)) {
      parts.push(`${flag} ${String(o[name])}`);
    }
  }
  const faults = formatFaults(o.faults);
  if (faults !== formatFaults(SIM_DEFAULTS.faults)) parts.push(`--faults ${faults}`);
  if (!o.validate) parts.push("--no-validate");
  else if (o.validateEvery !== SIM_DEFAULTS.validateEvery) {
    parts.push(`--validate-every ${o.validateEvery}`);
  }
  if (!o.workStealing) parts.push("--no-work-stealing");
  else if (o.workStealingInterval !== SIM_DEFAULTS.workStealingInterval) {
    parts.push(`--work-stealing-interval ${o.workStealingInterval}`);
  }
  if (!o.activeMemoryManager) parts.push("--no-active-memory-manager");
  else if (o.activeMemoryManagerInterval !== SIM_DEFAULTS.activeMemoryManagerInterval) {
    parts.push(`--active-memory-manager-interval ${o.activeMemoryManagerInterval}`);
  }
  if (!o.releasePhase) parts.push("--no-release");
  for (const name of NO_FLAG) {
    if (o[name] !== SIM_DEFAULTS[name]) extra.push(`${name}=${String(o[name])}`);
  }
  if (customHooks) extra.push("custom hooks");
  if (extra.length > 0) parts.push(`(not weft sim flags: ${extra.join(", ")})`);
  return parts.join(" ");
}
