/**
 * `weft sim --graph FILE`: the graph file `weft run` computes, read as the
 * simulated client's workload (see `sim/graphWorkload.ts`), with the flags that
 * read it again for the replay line of its runs.
 */

import { graphWorkload } from "../../sim/graphWorkload.ts";
import type { Workload } from "../../sim/workload.ts";
import { GraphInputError, loadGraphInput } from "./graphInput.ts";

/** What `--graph`, `--task-duration` and `--task-nbytes` gave. */
export interface SimGraphFlags {
  readonly graph: string;
  readonly taskDuration?: number;
  readonly taskNbytes?: number;
}

/** `word` as a shell reads it back: quoted unless it is plain. */
function shellWord(word: string): string {
  return /^[\w./@%+=:,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The flags that build the workload of `f` again, as the replay line prints them. */
export function simGraphFlags(f: SimGraphFlags): string {
  const parts = [`--graph ${shellWord(f.graph)}`];
  if (f.taskDuration !== undefined) parts.push(`--task-duration ${f.taskDuration}`);
  if (f.taskNbytes !== undefined) parts.push(`--task-nbytes ${f.taskNbytes}`);
  return parts.join(" ");
}

/**
 * The workload of the graph file `f.graph` (its `keys`, else its sinks). Throws a
 * GraphInputError whose message, one line, names the file and what is wrong.
 */
export async function loadSimGraph(f: SimGraphFlags): Promise<Workload> {
  const input = await loadGraphInput(f.graph);
  try {
    return graphWorkload(input.graph, {
      ...(input.keys !== undefined ? { keys: input.keys } : {}),
      ...(f.taskDuration !== undefined ? { duration: f.taskDuration } : {}),
      ...(f.taskNbytes !== undefined ? { nbytes: f.taskNbytes } : {}),
      flags: simGraphFlags(f),
    });
  } catch (err) {
    const message = (err as Error).message.replace(/^graphWorkload: /, "");
    throw new GraphInputError(`${f.graph}: ${message}`);
  }
}
