/**
 * Actor handles (Dask's `Actor`): an object made by a task submitted with
 * `{ actor: true }` stays on the worker that made it, and this handle calls
 * its methods and reads its fields there, each call one round trip to that
 * worker (the scheduler is not involved).
 *
 * ```ts
 * class Counter {
 *   n = 0;
 *   increment(by = 1): number { return (this.n += by); }
 * }
 * export const counter = defineTask("counter", () => new Counter());
 *
 * const handle = await client.submitWith({ actor: true }, counter).result();
 * await handle.call("increment", 2); // 2
 * await handle.get("n"); // 2
 * ```
 *
 * A handle travels as its {@link ActorRef} (the task's key and the holding
 * worker's address): passed as a task's argument (directly, or as the actor
 * future) a task receives a handle of its own, whose calls go through the
 * task's client; a handle passed to an actor's method arrives as a handle too.
 */

import { ClonedValue } from "../comm/clonedValue.ts";
import { isDataError, SerializationError } from "../comm/errors.ts";
import { RemoteError, remoteMessage } from "../comm/rpc.ts";
import { type ActorOp, type ActorRef, isActorRef } from "../protocol/actors.ts";
import { MAX_ARG_DEPTH } from "../protocol/messagesTaskSpec.ts";
import { DATA_KINDS } from "../protocol/values.ts";
import { showValue } from "../util/showValue.ts";
import { type CheckedClone, checkedWireClone } from "../worker/wireClone.ts";
import { ClientClosedError } from "./errors.ts";

/** What a handle sends its calls through: a client (in a task, the task's own). */
export interface ActorHost {
  /** Send `op` to the worker at `address`; resolves with its answer. */
  callActor(address: string, op: ActorOp, args: Record<string, unknown>): Promise<unknown>;
}

/** A call on an actor failed: the method threw, or the actor or its worker is gone. */
export class ActorError extends Error {
  override name = "ActorError";
  constructor(
    /** The actor task's key. */
    readonly key: string,
    /** `"Name: message"` of the error. */
    readonly exceptionText: string,
    /** The remote stack frames, when the method threw. */
    readonly tracebackText = "",
    options?: ErrorOptions,
  ) {
    super(`actor ${key}: ${exceptionText}`, options);
  }
}

/** The names of `T`'s methods. */
export type ActorMethod<T> = {
  [K in keyof T]: T[K] extends (...args: never[]) => unknown ? K : never;
}[keyof T] &
  string;

/** The names of `T`'s fields (what is not a method). */
export type ActorField<T> = {
  [K in keyof T]: T[K] extends (...args: never[]) => unknown ? never : K;
}[keyof T] &
  string;

/** The arguments of `T`'s method `K`. */
export type ActorArgs<T, K extends keyof T> = T[K] extends (...args: infer P) => unknown
  ? P
  : never;

/** What a call of `T`'s method `K` resolves to. */
export type ActorResult<T, K extends keyof T> = T[K] extends (...args: never[]) => infer R
  ? Awaited<R>
  : never;

/** What keeps an actor alive for a handle: a future of it (see {@link Actor}). */
export interface ActorKeepAlive {
  /** Stop keeping the actor alive (the handle is released). */
  release(): void;
  /** The error the actor task failed with (the actor is gone), or null. */
  readonly failure?: Error | null;
}

/** A handle to the object of type `T` an actor task made, on the worker holding it. */
export class Actor<T = unknown> implements ActorRef {
  /** The actor task's key (its future's key). */
  readonly __weftActor: string;
  /** The worker holding the object. */
  readonly address: string;
  // Private, so that a handle cloned or encoded is its ActorRef alone.
  readonly #host: () => Promise<ActorHost>;
  /**
   * What keeps the actor task's key wanted while the handle lives (a client's
   * future), if anything; its `failure` says the actor is gone (lost with its worker).
   */
  #keepAlive: ActorKeepAlive | null;

  /**
   * A handle to the actor `ref` names, calling through `host`. `keepAlive`
   * (a future of the actor) is held, and released with the handle.
   */
  constructor(
    ref: ActorRef,
    host: () => Promise<ActorHost>,
    keepAlive: ActorKeepAlive | null = null,
  ) {
    if (!isActorRef(ref)) {
      throw new TypeError(
        `new Actor: ref must be an ActorRef ({__weftActor, address}, as a task receives one), got ${showValue(ref)}`,
      );
    }
    if (typeof host !== "function") {
      throw new TypeError(
        `new Actor: host must be a function giving the client to call through (() => Promise.resolve(client)), got ${showValue(host)}`,
      );
    }
    this.__weftActor = ref.__weftActor;
    this.address = ref.address;
    this.#host = host;
    this.#keepAlive = keepAlive;
  }

  /**
   * Stop keeping the actor alive through this handle (a client's handle keeps
   * it, as a future of it does, until released or garbage collected). Once no
   * future or handle of it is left, the scheduler forgets it and its worker
   * drops the object. Idempotent.
   */
  release(): void {
    this.#keepAlive?.release();
    this.#keepAlive = null;
  }

  /** The actor task's key. */
  get key(): string {
    return this.__weftActor;
  }

  /**
   * Call method `method` of the object with `args` on its worker: resolves
   * with what it returns, awaited. Arguments and result are data, copied as
   * task results are, in process as over TCP (see `protocol/values.ts`): an
   * argument that is not data (a function, a class instance, …) rejects with
   * a TypeError naming it, before anything is sent. Calls run in the order
   * they arrive; an `async` method's calls may interleave at its awaits.
   * Rejects with an {@link ActorError} if the method threw, returned what is
   * not data, the object has no such method, or the actor or its worker is gone.
   */
  async call<K extends ActorMethod<T>>(
    method: K,
    ...args: ActorArgs<T, K>
  ): Promise<ActorResult<T, K>> {
    const name: unknown = method;
    if (typeof name !== "string" || name === "") {
      throw new TypeError(`Actor.call: method must be a method's name, got ${showValue(name)}`);
    }
    const answer = await this.send("actor_execute", {
      actor: this.__weftActor,
      function: method,
      args: this.wireArgs(method, args),
    });
    return answer as ActorResult<T, K>;
  }

  /** Where an error about a call of `method` comes from. */
  private callName(method: string): string {
    return `call(${JSON.stringify(method)}) of actor ${this.__weftActor}`;
  }

  /**
   * `args` as the call sends them: checked to be data, and copied now, as the
   * wire would copy them. Taken at the call, as a task's arguments are at
   * submit: over TCP they would otherwise be encoded only once the connection
   * is had (a caller changing one meanwhile would send the change), and in
   * process the worker would get the caller's objects themselves.
   */
  private wireArgs(method: string, args: readonly unknown[]): unknown[] {
    const out = new Array<unknown>(args.length);
    for (let i = 0; i < args.length; i++) {
      let cloned: CheckedClone;
      try {
        cloned = checkedWireClone(args[i], `args[${i}]`);
      } catch (err) {
        throw this.cannotSend(method, i, err);
      }
      if (cloned.problem !== null && cloned.unreadable !== null) {
        // A getter that threw: said where it sits, its error the cause.
        throw new TypeError(`${this.callName(method)}: ${cloned.problem}`, {
          cause: cloned.unreadable.cause,
        });
      }
      if (cloned.problem !== null) {
        throw new TypeError(
          `${this.callName(method)}: ${cloned.problem}; actor arguments must be data (${DATA_KINDS})`,
        );
      }
      out[i] = new ClonedValue(cloned.copy);
    }
    return out;
  }

  private cannotSend(method: string, index: number, err: unknown): TypeError {
    return new TypeError(
      `${this.callName(method)}: args[${index}] cannot be sent: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }

  /** Read field `attribute` of the object on its worker (Dask's attribute access). */
  async get<K extends ActorField<T>>(attribute: K): Promise<T[K]> {
    const name: unknown = attribute;
    if (typeof name !== "string" || name === "") {
      throw new TypeError(`Actor.get: attribute must be a field's name, got ${showValue(name)}`);
    }
    return (await this.send("actor_attribute", {
      actor: this.__weftActor,
      attribute,
    })) as T[K];
  }

  toString(): string {
    return `Actor(${this.__weftActor} on ${this.address})`;
  }

  private async send(op: ActorOp, args: Record<string, unknown>): Promise<unknown> {
    // Gone already (the scheduler lost its worker, say): a frozen worker would
    // take the call and never answer it.
    const gone = this.#keepAlive?.failure ?? null;
    // A closed client is the caller's own doing, said as such (below too).
    if (gone instanceof ClientClosedError) throw gone;
    if (gone !== null) {
      throw new ActorError(this.__weftActor, `the actor is gone: ${gone.message}`, "", {
        cause: gone,
      });
    }
    let answer: unknown;
    try {
      const host = await this.#host();
      answer = await host.callActor(this.address, op, args);
    } catch (err) {
      // A closed client is the caller's own doing, not the worker's.
      if (err instanceof ActorError || err instanceof ClientClosedError) throw err;
      // Encoding the request failed here (its arguments are clones already: hardly
      // ever): nothing was sent, the worker is fine.
      if (err instanceof SerializationError) {
        throw new TypeError(`${op} of actor ${this.__weftActor}: cannot be sent: ${err.message}`, {
          cause: err,
        });
      }
      // Too large to send: nothing was sent, and retrying would not help.
      if (isDataError(err)) {
        throw new ActorError(
          this.__weftActor,
          `${(err as Error).name}: ${(err as Error).message}`,
          "",
          {
            cause: err,
          },
        );
      }
      // The worker answered, with an error (its answer could not be encoded, say).
      if (err instanceof RemoteError) {
        throw new ActorError(this.__weftActor, `${err.remoteName}: ${remoteMessage(err)}`, "", {
          cause: err,
        });
      }
      const why = err instanceof Error ? err.message : String(err);
      throw new ActorError(
        this.__weftActor,
        `cannot reach the actor's worker ${this.address}: ${why}`,
        "",
        { cause: err },
      );
    }
    const r = answer as {
      status?: unknown;
      result?: unknown;
      exceptionText?: unknown;
      tracebackText?: unknown;
    } | null;
    if (r?.status === "OK") return bindActorRefs(ClonedValue.unwrap(r.result), this.#host);
    if (r?.status === "error" && typeof r.exceptionText === "string") {
      throw new ActorError(
        this.__weftActor,
        r.exceptionText,
        typeof r.tracebackText === "string" ? r.tracebackText : "",
      );
    }
    throw new ActorError(
      this.__weftActor,
      `malformed answer to ${op}: ${String(JSON.stringify(answer))}`,
    );
  }
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * `value` with every {@link ActorRef} in it (itself, or in arrays and plain
 * objects to {@link MAX_ARG_DEPTH} levels) made an {@link Actor} calling
 * through `host`. Parts without one are shared, not copied.
 */
export function bindActorRefs(value: unknown, host: () => Promise<ActorHost>): unknown {
  return bind(value, host, 0);
}

function bind(v: unknown, host: () => Promise<ActorHost>, depth: number): unknown {
  if (typeof v !== "object" || v === null) return v;
  if (isActorRef(v)) return new Actor(v, host);
  if (depth >= MAX_ARG_DEPTH) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const r = bind(v[i], host, depth + 1);
      if (r !== v[i] && out === null) out = v.slice(0, i);
      if (out !== null) out.push(r);
    }
    return out ?? v;
  }
  if (!isPlainObject(v)) return v;
  const o = v as Record<string, unknown>;
  let out: Record<string, unknown> | null = null;
  for (const k of Object.keys(o)) {
    const r = bind(o[k], host, depth + 1);
    if (r !== o[k] && out === null) out = { ...o };
    if (out !== null) out[k] = r;
  }
  return out ?? v;
}
