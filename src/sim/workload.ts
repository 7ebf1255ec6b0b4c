/**
 * A workload: the task graph a simulated client submits, with what each task
 * "does" (how long it runs, how big its result is) and which keys it wants.
 */

import type { Resources } from "../protocol/messagesWorker.ts";

/** One task of a workload. Its dependencies come earlier in the task list. */
export interface SimTask {
  /** The task's key. */
  readonly key: string;
  /** The function name (drives the scheduler's duration estimates). */
  readonly fn: string;
  /** Indices of the tasks whose results it takes, in argument order. */
  readonly deps: readonly number[];
  /** Size of its result in bytes. */
  readonly nbytes: number;
  /** Mean compute time in virtual seconds. */
  readonly duration: number;
  /** `{resource: amount}` it needs, if restricted. */
  readonly resources?: Resources;
  /** How many times the scheduler re-runs it after it raises. */
  readonly retries?: number;
  /** The workers (hosts) that may run it, if restricted (`workers=`). */
  readonly workers?: readonly string[];
  /** With `workers`: it may run elsewhere when none of them can. */
  readonly allowOtherWorkers?: boolean;
  /**
   * Not computed: the client scatters its value (a root's, the same number a
   * computation would give) to workers before it submits the graph.
   */
  readonly scattered?: boolean;
  /**
   * An actor (Dask's `actor=True`): its result stays on the worker that ran it,
   * and peers get a handle to it (see `SimActorRef`).
   */
  readonly actor?: boolean;
}

/** A task graph and the keys the client asks for. */
export interface Workload {
  /** A short description, e.g. `random(40)` or `tree(8192)`. */
  readonly name: string;
  /** The tasks, dependencies first. */
  readonly tasks: readonly SimTask[];
  /** Indices of the wanted tasks. */
  readonly wanted: readonly number[];
  /** `{resource: amount}` the workers supplying restricted resources get. */
  readonly workerResources?: Resources;
  /**
   * The `weft sim` flags that build it again (`--graph FILE …`), for the replay
   * line of its runs; none for the built-in workloads (their `--workload` names
   * them) and the workloads a program builds.
   */
  readonly flags?: string;
}

/** Indices of every task some wanted task needs, itself included. */
export function neededTasks(w: Workload): Uint8Array {
  const needed = new Uint8Array(w.tasks.length);
  const stack = [...w.wanted];
  while (stack.length > 0) {
    const i = stack.pop() as number;
    if (needed[i] === 1) continue;
    needed[i] = 1;
    for (const d of w.tasks[i].deps) stack.push(d);
  }
  return needed;
}
