/**
 * The code of a pool thread (loaded by `threadBootstrap.mjs`): imports the
 * task modules, then runs jobs. Arguments arrive and results leave
 * `v8.serialize`d (the structured-clone format), so a result that cannot be
 * cloned fails its task with a clear error instead of killing the thread.
 */

import { serialize } from "node:v8";
import { BroadcastChannel, threadId } from "node:worker_threads";
import { Piscina } from "piscina";
import { deserializeOwned } from "../comm/ownedDeserialize.ts";
import { jobLabel, makeError, wallSeconds } from "./executor.ts";
import { importTaskModule } from "./importTaskModule.ts";
import { exposeOriginalPositions } from "./originalPositions.ts";
import { ownBuffer } from "./ownBuffer.ts";
import { markPoolThread } from "./poolThreadMark.ts";
import { runTask, type SecedeHooks } from "./runTask.ts";
import { taskFunctionNames } from "./taskRegistry.ts";
import {
  type ChannelMessage,
  isChannelMessage,
  type ThreadInit,
  type ThreadJob,
  type ThreadReply,
} from "./threadProtocol.ts";
import { CollectWhenIdle, collectGarbageOnDemand, fullGarbageCollection } from "./throttledGc.ts";

let channel: BroadcastChannel | null = null;
let threadInit: ThreadInit | null = null;
/** This thread's full collection, exposed on first use; null if it cannot be had. */
let gc: (() => void) | null | undefined;
const rejoinWaiters = new Map<number, () => void>();

function post(msg: ChannelMessage): void {
  if (channel === null) throw new Error("pool thread not initialised");
  channel.postMessage(msg);
}

/** Open the channel and import the task modules. */
export async function init(data: unknown): Promise<void> {
  const d = data as Partial<ThreadInit> | null;
  if (d === null || typeof d?.channel !== "string" || !Array.isArray(d.taskModules)) {
    throw new TypeError("pool thread: workerData must be {channel, taskModules}");
  }
  threadInit = d as ThreadInit;
  markPoolThread();
  channel = new BroadcastChannel(d.channel);
  channel.onmessage = (ev: unknown) => {
    const msg = (ev as { data?: unknown }).data;
    if (isChannelMessage(msg) && msg.t === "rejoined") rejoinWaiters.get(msg.token)?.();
  };
  // For the worker's profiler: this thread's frames are mapped to their sources here.
  exposeOriginalPositions();
  for (const url of d.taskModules) await importTaskModule(url);
}

function hooksFor(token: number): SecedeHooks {
  return {
    secede: (after) => post({ t: "secede", token, after }),
    rejoin: () =>
      new Promise<void>((resolve) => {
        rejoinWaiters.set(token, () => {
          rejoinWaiters.delete(token);
          resolve();
        });
        post({ t: "rejoin", token });
      }),
    client: () => {
      post({ t: "client", token });
      return threadClient();
    },
  };
}

/** This thread's client for task code, once asked for: connected through the main thread. */
let client: Promise<unknown> | null = null;
/** That client once connected: task code that closed it gets another at its next `getClient()`. */
let connected: { readonly isClosed: boolean; readonly keyCount: number } | null = null;

/**
 * Futures this thread's task code let go of, released by a collection once the
 * thread is quiet: else they held their results on the cluster until the
 * thread next allocated enough to collect, for good on an idle one.
 */
const letGoFutures = new CollectWhenIdle(
  () => connected !== null && !connected.isClosed && connected.keyCount > 0,
  // Throttled to 5% of the time; a thread has no logger to warn where gc() cannot be had.
  collectGarbageOnDemand(() => {}),
);

function threadClient(): Promise<unknown> {
  if (connected?.isClosed === true) {
    // Closed by task code: it would fail every later task of this thread.
    connected = null;
    client = null;
  }
  client ??= connectThreadClient().then(
    (c) => {
      connected = c as { readonly isClosed: boolean; readonly keyCount: number };
      return c;
    },
    (err: unknown) => {
      client = null; // the next task asks again
      throw err;
    },
  );
  return client;
}

async function connectThreadClient(): Promise<unknown> {
  const d = threadInit;
  if (d === null || channel === null) throw new Error("pool thread not initialised");
  const scheduler = d.scheduler;
  if (typeof scheduler !== "string") throw new Error("getClient(): this worker has no scheduler");
  // Loaded on first use: most pool threads never need a client.
  const [{ Client }, { setDialer }, { dialThroughBridge }] = await Promise.all([
    import("../client/client.ts"),
    import("../comm/connect.ts"),
    import("../comm/bridge.ts"),
  ]);
  const own = channel;
  setDialer((address, o) =>
    dialThroughBridge(
      d.channel,
      (m) => own.postMessage(m),
      address,
      o.timeoutMs ?? d.connectTimeoutMs,
      o.signal,
    ),
  );
  return Client.connect(scheduler, {
    name: "worker-client",
    timeoutMs: d.connectTimeoutMs,
    printTaskOutput: false,
  });
}

/** Send what this thread's client queued, if it has one (connected or not, it does not throw). */
async function flushThreadClient(): Promise<void> {
  if (client === null) return;
  const c = (await client.catch(() => null)) as { flush(): Promise<void> } | null;
  await c?.flush();
}

/**
 * Resolves once what this thread wrote to its stdout and stderr (a task's
 * `console.log`) has been handed to the main thread: a thread's stream passes
 * on one chunk at a time, the next once the main thread has taken it, and
 * keeps the rest here, lost if the thread is terminated (the worker closing
 * as the task's result arrives). Piscina waits so itself before a result only
 * with its atomics "sync", which the pool does not use (`piscinaExecutor.ts`).
 */
async function stdioHandedOver(): Promise<void> {
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.writableLength > 0) await new Promise((resolve) => stream.write("", resolve));
  }
}

/** How many of the task modules loaded since the pool started this thread has imported. */
let imported = 0;

/** Import the modules of `loaded` this thread has not (in order: each list extends the last). */
async function importLoaded(loaded: readonly string[]): Promise<void> {
  while (imported < loaded.length) {
    await importTaskModule(loaded[imported]);
    imported++;
  }
}

/**
 * A plain `Error` naming the module that could not be imported and why. What
 * the import threw may not survive the way to the main thread: tsx's compile
 * error carries fields a structured clone cannot copy, and arrived as a bare
 * object ("[object Object]"), with neither the file nor the compiler's words.
 */
function importFailure(url: string | undefined, err: unknown): Error {
  const why = err instanceof Error ? `${err.name}: ${err.message}` : messageOf(err);
  return new Error(`cannot import the task module ${url ?? "(unknown)"}: ${why}`);
}

/** The `message` of an error-like object, else its text. */
function messageOf(err: unknown): string {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : String(err);
}

/** The reply for a task that failed before it could run: `name: what: why`. */
function failedBeforeRun(name: string, what: string, err: unknown): ThreadReply {
  const t = wallSeconds();
  const why = err instanceof Error ? err.message : String(err);
  return {
    kind: "done",
    outcome: {
      status: "error",
      error: makeError(name, `${what}: ${why}`),
      start: t,
      stop: t,
      threadId,
      secededAfter: null,
    },
  };
}

/** Run one job (the piscina handler). */
export async function handle(job: ThreadJob): Promise<ThreadReply> {
  if (job.kind === "ping") {
    try {
      await importLoaded(job.loaded);
    } catch (err) {
      throw importFailure(job.loaded[imported], err);
    }
    return { kind: "pong", tasks: taskFunctionNames(), threadId };
  }
  if (job.kind === "gc") {
    // Each thread has a heap of its own: the main thread's collection misses it.
    gc ??= fullGarbageCollection();
    gc?.();
    return { kind: "collected", collected: gc !== null, threadId };
  }
  let args: unknown;
  try {
    await importLoaded(job.loaded);
  } catch (err) {
    const module = job.loaded[imported];
    return failedBeforeRun(
      "ImportError",
      `${jobLabel(job)}: its thread could not import the task module ${module}`,
      err,
    );
  }
  try {
    // A small typed array of an argument that the task keeps (a module-level
    // cache) would otherwise keep the whole arguments' bytes allocated on this thread.
    args = deserializeOwned(job.args);
  } catch (err) {
    return failedBeforeRun(
      "DataCloneError",
      `arguments of ${jobLabel(job)} cannot be deserialised`,
      err,
    );
  }
  const outcome = await runTask(
    {
      key: job.key,
      fn: job.fn,
      args: args as unknown[],
      hasActors: job.hasActors,
      label: job.label,
    },
    hooksFor(job.token),
    (v) => serialize(v),
  );
  // What the task's client queued (a Pub.put, a release) leaves before the
  // task's result does (its batch would otherwise wait for its interval).
  await flushThreadClient();
  if (connected !== null) letGoFutures.soon();
  await stdioHandedOver();
  const reply: ThreadReply = { kind: "done", outcome };
  // The serialized value is moved to the main thread, not copied again.
  const transfer = outcome.status === "ok" ? ownBuffer(outcome.value as Uint8Array) : [];
  if (transfer.length === 0) return reply;
  // (piscina unwraps the value, posting it with the transfer list)
  const movable = { [Piscina.transferableSymbol]: transfer, [Piscina.valueSymbol]: reply };
  return Piscina.move(
    movable as unknown as Parameters<typeof Piscina.move>[0],
  ) as unknown as ThreadReply;
}
