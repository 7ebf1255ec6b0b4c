/** Replace the task references in a task's arguments by the values they refer to. */

import { actorRef, isActorRef } from "../protocol/actors.ts";
import { isTaskRef } from "../protocol/messagesTaskSpec.ts";
import type { DataStore } from "./state/dataStore.ts";

/** A task refers to a key whose value this worker does not hold. */
export class MissingDependencyError extends Error {
  override name = "MissingDependencyError";
}

/** The actors a worker holds, by task key, and its address (for their `ActorRef`s). */
export interface HeldActors {
  /** The actors, by the key of the task that made each. */
  readonly actors: ReadonlyMap<string, unknown>;
  /** The worker's address. */
  readonly address: string;
}

/** A task's arguments, resolved. */
export interface ResolvedArgs {
  /** The arguments, each task reference replaced by the value it refers to. */
  readonly args: unknown[];
  /**
   * Some reference was replaced by an `ActorRef` (an actor held here, or one
   * fetched from a peer): the thread running the task makes handles of them.
   */
  readonly hasActors: boolean;
}

function isPlainObject(v: object): v is Record<string, unknown> {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

class Resolver {
  hasActors = false;

  constructor(
    private readonly data: DataStore,
    private readonly key: string,
    private readonly held: HeldActors | null,
  ) {}

  valueOf(ref: string): unknown {
    if (this.data.has(ref)) {
      const v = this.data.get(ref);
      if (isActorRef(v)) this.hasActors = true;
      return v;
    }
    if (this.held?.actors.has(ref)) {
      this.hasActors = true;
      return actorRef(ref, this.held.address);
    }
    throw new MissingDependencyError(
      `task ${JSON.stringify(this.key)} refers to ${JSON.stringify(ref)}, which is not in memory on this worker`,
    );
  }

  resolve(v: unknown): unknown {
    if (typeof v !== "object" || v === null) return v;
    if (isTaskRef(v)) return this.valueOf(v.__weftRef);
    if (Array.isArray(v)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        const r = this.resolve(item);
        if (r !== item && out === null) out = v.slice(0, i);
        if (out !== null) out.push(r);
      }
      return out ?? v;
    }
    if (!isPlainObject(v)) return v;
    let out: Record<string, unknown> | null = null;
    for (const k of Object.keys(v)) {
      const item = v[k];
      const r = this.resolve(item);
      if (r !== item && out === null) out = { ...v };
      if (out !== null) out[k] = r;
    }
    return out ?? v;
  }
}

/**
 * `args` with every `TaskRef` (in arrays and plain objects, at any depth)
 * replaced by the value `data` holds for it, or by the `ActorRef` of an actor
 * `held` here. The input is not modified; parts without references are
 * shared. Throws a {@link MissingDependencyError} for a reference to a key
 * held neither way.
 */
export function resolveArgs(
  args: readonly unknown[],
  data: DataStore,
  key: string,
  held: HeldActors | null = null,
): ResolvedArgs {
  const resolver = new Resolver(data, key, held);
  const resolved = resolver.resolve(args) as unknown[];
  return { args: resolved, hasActors: resolver.hasActors };
}
