/**
 * Actors on the wire (Dask's `Actor` and the worker's `actor_execute` /
 * `actor_attribute`): an actor task's result stays on the worker that made it,
 * and what travels in its place (to clients, to peers, to pool threads, in a
 * worker's data) is an {@link ActorRef} naming the task and that worker.
 */

import type { Key } from "./messagesTaskSpec.ts";

/**
 * An actor as it travels: plain data, so that it crosses the wire, threads
 * and spilling unchanged. Where it reaches user code as a task's argument or
 * a future's result it is turned into a callable `Actor` handle.
 */
export interface ActorRef {
  /** The actor task's key. */
  readonly __weftActor: Key;
  /** The worker holding the actor. */
  readonly address: string;
}

/** The {@link ActorRef} of the actor task `key` held by the worker at `address`. */
export function actorRef(key: Key, address: string): ActorRef {
  return { __weftActor: key, address };
}

/** True iff `v` is an {@link ActorRef}: a plain object with a string `__weftActor` and `address`. */
export function isActorRef(v: unknown): v is ActorRef {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as { __weftActor?: unknown }).__weftActor === "string" &&
    typeof (v as { address?: unknown }).address === "string"
  );
}

/** The worker rpc ops an actor handle calls. */
export type ActorOp = "actor_execute" | "actor_attribute";

/** `actor_execute`: call method `function` of the actor `actor` with `args`. */
export interface ActorExecuteArgs {
  readonly actor: Key;
  readonly function: string;
  /** The arguments (on the wire, values other than scalars are cloned values). */
  readonly args: readonly unknown[];
}

/** `actor_attribute`: read the field `attribute` of the actor `actor`. */
export interface ActorAttributeArgs {
  readonly actor: Key;
  readonly attribute: string;
}

/**
 * A worker's answer to `actor_execute` and `actor_attribute`: the method's
 * (awaited) result or the field's value, or why there is none (the method
 * threw, the actor is not there, it has no such method).
 */
export type ActorReply =
  | { readonly status: "OK"; readonly result: unknown }
  | {
      readonly status: "error";
      /** `"Name: message"` of the error. */
      readonly exceptionText: string;
      /** The remote stack frames, when the method threw. */
      readonly tracebackText: string;
    };

/** Why `args` is not an `actor_execute` request, or null. */
export function actorExecuteProblem(args: Record<string, unknown>): string | null {
  if (typeof args.actor !== "string") return "actor must be a task key";
  if (typeof args.function !== "string" || args.function === "") {
    return "function must be a method name";
  }
  if (!Array.isArray(args.args)) return "args must be an array";
  return null;
}

/** Why `args` is not an `actor_attribute` request, or null. */
export function actorAttributeProblem(args: Record<string, unknown>): string | null {
  if (typeof args.actor !== "string") return "actor must be a task key";
  if (typeof args.attribute !== "string" || args.attribute === "") {
    return "attribute must be a field name";
  }
  return null;
}
