/**
 * What simulated tasks compute: a 32-bit number mixed from the task's key
 * and its inputs' numbers, in argument order. Any wrong, stale or misplaced
 * input changes the answer, so every result can be checked against
 * {@link expectedValues}.
 */

import type { TaskSpec } from "../protocol/messagesTaskSpec.ts";
import { taskRef } from "../protocol/messagesTaskSpec.ts";
import type { SimTask, Workload } from "./workload.ts";

/** A result held in a simulated worker's memory. */
export class SimValue {
  constructor(
    /** The key that computed it. */
    readonly key: string,
    /** The checkable number. */
    readonly v: number,
    /** Its simulated size in bytes. */
    readonly nbytes: number,
  ) {}
}

/**
 * What a peer gets for an actor (Dask's `Actor`, weft's `ActorRef`): the actor
 * stays on the worker that ran it, in its state machine's `actors`, and what a
 * peer's `get_data` answers, and a worker holding it keeps in its `data`, is a
 * handle naming the key and that worker. A task given the handle computes from
 * the number the actor holds, as a real task would read it through the handle,
 * so its dependents' values are checked as any others.
 */
export class SimActorRef {
  constructor(
    /** The actor task's key. */
    readonly key: string,
    /** The worker the actor lives on (the one that answered `get_data`). */
    readonly address: string,
    /** The actor's number, as read through the handle. */
    readonly v: number,
  ) {}

  /** A handle is small, whatever the actor holds. */
  get nbytes(): number {
    return 64;
  }
}

/** How long a task runs and how big its result is: the first argument of every simulated task. */
export interface TaskParams {
  /** Mean compute time, virtual seconds. */
  readonly d: number;
  /** Result size in bytes. */
  readonly n: number;
}

/** FNV-1a of a string, 32 bits. */
export function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The number task `key` computes from its inputs' numbers. */
export function computeValue(key: string, inputs: readonly number[]): number {
  let h = keyHash(key);
  for (const x of inputs) {
    h = Math.imul(h ^ x, 0x01000193);
    h ^= h >>> 15;
  }
  return h >>> 0;
}

/** The correct number of every task of `w`, by index. */
export function expectedValues(w: Workload): Uint32Array {
  const out = new Uint32Array(w.tasks.length);
  const inputs: number[] = [];
  for (let i = 0; i < w.tasks.length; i++) {
    const t = w.tasks[i];
    inputs.length = 0;
    for (const d of t.deps) inputs.push(out[d]);
    out[i] = computeValue(t.key, inputs);
  }
  return out;
}

/** The run spec of a task: its params, then a reference to each input. */
export function taskSpecOf(w: Workload, t: SimTask): TaskSpec {
  const params: TaskParams = { d: t.duration, n: t.nbytes };
  const args: unknown[] = [params];
  for (const d of t.deps) args.push(taskRef(w.tasks[d].key));
  return { fn: t.fn, args };
}
