/**
 * The worker's side of actors (Dask's `Worker.actor_execute` and
 * `actor_attribute`): clients and tasks call methods of, and read fields of,
 * the objects actor tasks made here. Calls run on the main thread, where the
 * objects live, as they arrive: a synchronous method runs to its end before
 * the next call starts (as on Dask's single actor thread); an `async` one
 * lets others in at its awaits.
 *
 * Inside a method, `getClient()` gives the worker's client, and handles among
 * the arguments are callable.
 */

import { type ActorHost, bindActorRefs } from "../client/actor.ts";
import { ClonedValue } from "../comm/clonedValue.ts";
import type { RpcContext } from "../comm/rpc.ts";
import { type ActorReply, actorAttributeProblem, actorExecuteProblem } from "../protocol/actors.ts";
import { DATA_KINDS, valueProblem } from "../protocol/values.ts";
import { asWireValue } from "./dataServer.ts";
import { serializeError } from "./executor.ts";
import { isAsyncFunction } from "./runTask.ts";
import type { WorkerState } from "./state/workerState.ts";
import { runInTask, runInTaskSync, TASK_CONTEXT_MODULE, type TaskRuntime } from "./taskContext.ts";
import { frameLocations, withoutRunnerFrames } from "./taskFrames.ts";
import { type CheckedClone, checkedWireClone } from "./wireClone.ts";

/**
 * Where the frames that call actor methods are: this module's and the task
 * context's. Below them come the rpc server's and Node's, none the method's.
 */
const CALLER_FRAMES = frameLocations([import.meta.url, TASK_CONTEXT_MODULE]);

/** What the actor server needs of its worker. */
export interface ActorServerHost {
  readonly state: WorkerState;
  /** The client of code running on the main thread (`getClient()`). */
  readonly taskClient: () => Promise<unknown>;
}

/** The context of one method call: `getClient()` works, `secede()` / `rejoin()` do nothing. */
class ActorCall implements TaskRuntime {
  constructor(
    readonly key: string,
    private readonly host: ActorServerHost,
  ) {}
  secede(): void {}
  async rejoin(): Promise<void> {}
  client(): Promise<unknown> {
    return this.host.taskClient();
  }
}

/** "a number", "an object", …: the kind of a field, as a call of it is told. */
function fieldKind(v: unknown): string {
  const kind = typeof v;
  return kind === "object" ? "an object" : `a ${kind}`;
}

function errorReply(exceptionText: string, tracebackText = ""): ActorReply {
  return { status: "error", exceptionText, tracebackText };
}

/**
 * Serves `actor_execute` and `actor_attribute`. An answer larger than the
 * requester's `maxMessageBytes` (said in the request) is not sent: it gets an
 * error answer with the `MessageTooLargeError`.
 */
export class ActorServer {
  /** Handles among a call's arguments call through the worker's client. */
  private readonly callers: () => Promise<ActorHost>;

  constructor(private readonly host: ActorServerHost) {
    this.callers = host.taskClient as () => Promise<ActorHost>;
  }

  /** `{actor, function, args}`: the method's result, awaited. */
  readonly execute = async (
    args: Record<string, unknown>,
    ctx?: RpcContext,
  ): Promise<ActorReply> => {
    const problem = actorExecuteProblem(args);
    if (problem !== null) throw new TypeError(`actor_execute: ${problem}`);
    const key = args.actor as string;
    const name = args.function as string;
    const found = this.actorOf(key);
    if (!found.ok) return found.reply;
    const actor = found.actor;
    let method: unknown;
    try {
      method = actor[name];
    } catch (err) {
      return this.thrown(err);
    }
    if (typeof method !== "function") {
      return errorReply(
        `AttributeError: ${className(actor)} has no method ${JSON.stringify(name)}` +
          (method === undefined ? "" : ` (it is ${fieldKind(method)} field: read it with get)`),
      );
    }
    const call = new ActorCall(key, this.host);
    const callArgs = (args.args as unknown[]).map((a) =>
      bindActorRefs(ClonedValue.unwrap(a), this.callers),
    );
    const fn = method as (...a: unknown[]) => unknown;
    let result: unknown;
    try {
      result = isAsyncFunction(fn)
        ? await runInTask(call, () => fn.apply(actor, callArgs))
        : await runInTaskSync(call, (...a: unknown[]) => fn.apply(actor, a), callArgs);
    } catch (err) {
      return this.thrown(err);
    }
    return answer(result, actor, name, "method", ctx);
  };

  /** `{actor, attribute}`: the field's value. */
  readonly attribute = async (
    args: Record<string, unknown>,
    ctx?: RpcContext,
  ): Promise<ActorReply> => {
    const problem = actorAttributeProblem(args);
    if (problem !== null) throw new TypeError(`actor_attribute: ${problem}`);
    const key = args.actor as string;
    const name = args.attribute as string;
    const found = this.actorOf(key);
    if (!found.ok) return found.reply;
    let value: unknown;
    try {
      // No such field is an AttributeError, as Dask's getattr raises; one set to
      // undefined is read as such.
      if (!(name in found.actor)) {
        return errorReply(
          `AttributeError: ${className(found.actor)} has no attribute ${JSON.stringify(name)}`,
        );
      }
      value = found.actor[name];
    } catch (err) {
      return this.thrown(err);
    }
    if (typeof value === "function") {
      return errorReply(
        `AttributeError: ${JSON.stringify(name)} of ${className(found.actor)} is a method: call it with call`,
      );
    }
    return answer(value, found.actor, name, "field", ctx);
  };

  /** The object the actor task `key` made here, or the error reply saying why there is none. */
  private actorOf(
    key: string,
  ):
    | { readonly ok: true; readonly actor: Record<string, unknown> }
    | { readonly ok: false; readonly reply: ActorReply } {
    const state = this.host.state;
    const ts = state.tasks.get(key);
    const actor = state.actors.get(key);
    if (ts === undefined || ts.state !== "memory" || !state.actors.has(key)) {
      return {
        ok: false,
        reply: errorReply(
          `ActorLostError: worker ${state.address} holds no actor ${JSON.stringify(key)} (released, lost with a restart, or never made here)`,
        ),
      };
    }
    if ((typeof actor !== "object" && typeof actor !== "function") || actor === null) {
      return {
        ok: false,
        reply: errorReply(
          `TypeError: the actor task ${JSON.stringify(key)} returned ${actor === null ? "null" : typeof actor}, which has no methods or fields`,
        ),
      };
    }
    return { ok: true, actor: actor as Record<string, unknown> };
  }

  private thrown(err: unknown): ActorReply {
    const e = serializeError(err);
    // The method's frames (and those of weft's APIs it called), as a task's
    // traceback: the frames calling it are weft's, the same for every call.
    return errorReply(e.exceptionText, withoutRunnerFrames(e.tracebackText, CALLER_FRAMES));
  }
}

/**
 * The reply carrying `value`, the result of method `name` of `actor` or its
 * field `name`, if it is data (see `protocol/values.ts`), as task results must
 * be. Over TCP the reply is a copy; to a caller in this process (`ctx` an
 * in-process comm, or none) the value is copied here as the wire would copy
 * it, or the caller would share the actor's objects with it.
 */
function answer(
  value: unknown,
  actor: object,
  name: string,
  of: "method" | "field",
  ctx: RpcContext | undefined,
): ActorReply {
  let problem: string | null;
  let result: unknown = value;
  if (ctx !== undefined && !ctx.comm.localAddress.startsWith("inproc://")) {
    problem = valueProblem(value, "result");
  } else {
    let cloned: CheckedClone;
    try {
      cloned = checkedWireClone(value, "result");
    } catch (err) {
      return cannotSend(actor, name, of, err instanceof Error ? err.message : String(err));
    }
    problem = cloned.problem;
    result = cloned.copy;
  }
  if (problem === null) return { status: "OK", result: asWireValue(result) };
  return cannotSend(actor, name, of, `${problem}; actor results must be data (${DATA_KINDS})`);
}

function cannotSend(actor: object, name: string, of: "method" | "field", why: string): ActorReply {
  const what =
    of === "method"
      ? `the result of ${className(actor)}.${name}()`
      : `field ${JSON.stringify(name)} of ${className(actor)}`;
  return errorReply(`DataCloneError: ${what} cannot be sent: ${why}`);
}

function className(o: object): string {
  try {
    const name = (o as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === "string" && name !== "" ? name : "the actor";
  } catch {
    return "the actor";
  }
}
