/**
 * The `weft sim` flags behind the simulator's options, so that an option refused by
 * `resolveSimOptions` (whose messages name the API option, as a script passes it) is
 * reported to a command-line user by the flag they typed.
 */

import type { SimOptions } from "../../sim/options.ts";

/** The flag of each simulator option that `weft sim` sets from its command line. */
export const SIM_OPTION_FLAGS: Readonly<Partial<Record<keyof SimOptions, string>>> = {
  seed: "--seed",
  workload: "--workload",
  tasks: "--tasks",
  workers: "--workers",
  maxThreads: "--max-threads",
  outgoingLimit: "--outgoing-limit",
  incomingLimit: "--incoming-limit",
  latency: "--latency",
  bandwidth: "--bandwidth",
  replicate: "--replicate",
  replicateOne: "--replicate-one",
  rebalance: "--rebalance",
  retire: "--retire",
  fireAndForget: "--fire-and-forget",
  restart: "--restart",
  restartWorker: "--restart-worker",
  actors: "--actors",
  faults: "--faults",
  variant: "--variant",
  validate: "--no-validate",
  validateEvery: "--validate-every",
  workStealing: "--no-work-stealing",
  workStealingInterval: "--work-stealing-interval",
  activeMemoryManager: "--no-active-memory-manager",
  activeMemoryManagerInterval: "--active-memory-manager-interval",
  releasePhase: "--no-release",
};

/**
 * `message`, a refusal of `resolveSimOptions`, with the option it opens with named by
 * its flag: `workStealingInterval must be…` becomes `--work-stealing-interval must be…`,
 * and `faults.crash: …` becomes `--faults crash: …`. Only the opening name is rewritten:
 * further on, a word such as "workers" is prose, and options the command line does not
 * set (heartbeatTimeout) have no flag to give.
 */
export function withSimFlags(message: string): string {
  const m = /^([A-Za-z]+)(\.|(?=[ :]))/.exec(message);
  if (m === null) return message;
  const [whole, name, dot] = m as unknown as [string, string, string];
  const flag = Object.hasOwn(SIM_OPTION_FLAGS, name)
    ? SIM_OPTION_FLAGS[name as keyof SimOptions]
    : undefined;
  if (flag === undefined) return message;
  return `${flag}${dot === "." ? " " : ""}${message.slice(whole.length)}`;
}
