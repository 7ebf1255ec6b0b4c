/**
 * `weft sim --graph FILE`: the graph file `weft run` computes, read as the
 * simulated client's workload (see `sim/graphWorkload.ts`), with the flags that
 * read it again for the replay line of its runs.
 */

import { resolve } from "node:path";
import { graphWorkload, type TaskCost } from "../../sim/graphWorkload.ts";
import type { Workload } from "../../sim/workload.ts";
import { parseBytes } from "../../util/parseBytes.ts";
import { parseTimedelta } from "../../util/parseTimedelta.ts";
import { showValue } from "../../util/showValue.ts";
import { isRecord } from "../../util/valueShapes.ts";
import { GraphInputError, type GraphStdin, loadGraphInput, STDIN_FILE } from "./graphInput.ts";
import { shellWord } from "./shellWord.ts";

/** What `--graph`, `--task-duration` and `--task-nbytes` gave. */
export interface SimGraphFlags {
  readonly graph: string;
  readonly taskDuration?: number;
  readonly taskNbytes?: number;
}

/**
 * The flags that build the workload of `f` again, as the replay line prints them.
 * The graph's path is absolute: the line is pasted into another shell, a CI log or
 * an issue, where a relative path reads another file or none; `-` (stdin) stays `-`.
 */
export function simGraphFlags(f: SimGraphFlags): string {
  // Stdin's graph cannot be named: the line reruns with the same graph piped in again.
  const parts = [f.graph === STDIN_FILE ? "--graph -" : `--graph ${shellWord(resolve(f.graph))}`];
  if (f.taskDuration !== undefined) parts.push(`--task-duration ${f.taskDuration}`);
  if (f.taskNbytes !== undefined) parts.push(`--task-nbytes ${f.taskNbytes}`);
  return parts.join(" ");
}

/**
 * The costs by function name of a graph file's `"sim"` field, `{fn: {"duration":
 * "50ms", "nbytes": "1MB"}}` (a number: seconds, bytes). Throws an Error saying
 * what is wrong where.
 */
function costsByFunction(sim: unknown): Record<string, TaskCost> {
  const shape = 'the "sim" field must be {"fn": {"duration": "50ms", "nbytes": "1MB"}, …}';
  if (!isRecord(sim)) throw new Error(`${shape}, got ${showValue(sim)}`);
  const out: Record<string, TaskCost> = {};
  for (const [fn, cost] of Object.entries(sim)) {
    const at = `sim[${JSON.stringify(fn)}]`;
    if (!isRecord(cost)) throw new Error(`${at}: ${shape}, got ${showValue(cost)}`);
    const unknown = Object.keys(cost).filter((k) => k !== "duration" && k !== "nbytes");
    if (unknown.length > 0) {
      throw new Error(
        `${at}: unknown field ${JSON.stringify(unknown[0])} (duration and nbytes are known)`,
      );
    }
    const { duration, nbytes } = cost;
    const read = (what: string, parse: () => number): number => {
      try {
        return parse();
      } catch (err) {
        throw new Error(`${at}.${what}: ${(err as Error).message}`);
      }
    };
    out[fn] = {
      ...(duration !== undefined
        ? { duration: read("duration", () => parseTimedelta(duration as string | number)) }
        : {}),
      ...(nbytes !== undefined
        ? { nbytes: read("nbytes", () => parseBytes(nbytes as string | number)) }
        : {}),
    };
  }
  return out;
}

/**
 * The workload of the graph file `f.graph` (its `keys`, else its sinks), `-` read
 * from `stdin`. Throws a GraphInputError whose message, one line, names the file
 * and what is wrong.
 */
export async function loadSimGraph(f: SimGraphFlags, stdin?: GraphStdin): Promise<Workload> {
  const input = await loadGraphInput(f.graph, stdin);
  try {
    return graphWorkload(input.graph, {
      ...(input.keys !== undefined ? { keys: input.keys } : {}),
      ...(input.sim !== undefined ? { byFunction: costsByFunction(input.sim) } : {}),
      ...(f.taskDuration !== undefined ? { duration: f.taskDuration } : {}),
      ...(f.taskNbytes !== undefined ? { nbytes: f.taskNbytes } : {}),
      flags: simGraphFlags(f),
    });
  } catch (err) {
    // The file's "sim" field is graphWorkload's byFunction.
    const message = (err as Error).message
      .replace(/^graphWorkload: /, "")
      .replace(/^byFunction(\[| names)/, "sim$1");
    throw new GraphInputError(`${f.graph === STDIN_FILE ? "stdin" : f.graph}: ${message}`);
  }
}
