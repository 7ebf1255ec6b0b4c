/**
 * Task functions for the client and cluster tests (a task module: loaded by
 * every worker, and imported by the tests for typed submits).
 */

import { setTimeout as sleep } from "node:timers/promises";
import { TaskError } from "../worker/state/errorMessage.ts";
import { Reschedule, rejoin, secede } from "../worker/taskContext.ts";
import { defineTask } from "../worker/taskRegistry.ts";
import type { Actor } from "./actor.ts";
import { getClient, workerClient } from "./taskClient.ts";
import { print, warn } from "./taskPrint.ts";

/** An error class of the task module's own. */
class ValueError extends Error {
  override name = "ValueError";
}

export const inc = defineTask("inc", (x: number) => x + 1);
export const add = defineTask("add", (a: number, b: number) => a + b);
export const sum = defineTask("sum", (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0));
export const identity = defineTask("identity", <T>(x: T): T => x);
export const double = defineTask("double", (x: number) => 2 * x);
/** A point: an interface, not a type alias (futures inside it must type-check too). */
export interface Point {
  readonly x: number;
  readonly y: number;
}
export const manhattan = defineTask("manhattan", (p: Point) => Math.abs(p.x) + Math.abs(p.y));
export const boom = defineTask("boom", (message: string): number => {
  throw new ValueError(message);
});
/** Throws a `TaskError` whose texts (kept whole, unlike an Error's message) are `chars` long. */
export const longTaskError = defineTask("longTaskError", (chars: number): number => {
  throw new TaskError(`ValueError: ${"x".repeat(chars)}`, "");
});
export const slowInc = defineTask("slowInc", async (x: number, ms: number) => {
  await sleep(ms);
  return x + 1;
});
/**
 * What {@link gatedInc} waits on (process-wide, as {@link PLUGIN_GATE}): a test
 * replaces `wait` to hold a worker's thread until its next step is done, where a
 * task of a set time could end first on a loaded host.
 */
export const TASK_GATE: { wait: Promise<void> } = ((globalThis as Record<symbol, unknown>)[
  Symbol.for("weft.test.taskGate")
] ??= { wait: Promise.resolve() }) as { wait: Promise<void> };
/** `x + 1`, once {@link TASK_GATE} opens. */
export const gatedInc = defineTask("gatedInc", async (x: number) => {
  await TASK_GATE.wait;
  return x + 1;
});
/** Returns a value that cannot be cloned (a function inside). */
export const uncloneable = defineTask("uncloneable", () => ({ callback: () => 1 }));

/** Raises `Reschedule`, which only a task may. */
export const reschedules = defineTask("reschedules", () => {
  throw new Reschedule();
});

const attempts = new Map<string, number>();
/** Fails the first `failures` calls with the same `id` (per process), then returns `value`. */
export const flaky = defineTask("flaky", (id: string, failures: number, value: number) => {
  const n = (attempts.get(id) ?? 0) + 1;
  attempts.set(id, n);
  if (n <= failures) throw new ValueError(`attempt ${n} of ${id} failed`);
  return value;
});

/** What {@link tangled} returns. */
export interface Tangled {
  cyc: { n: number; self?: unknown };
  pair: object[];
  sparse: number[];
  proto: object;
}

/** A value only the structured-clone algorithm carries whole: a cycle, a shared object, holes, a `__proto__` key. */
export const tangled = defineTask("tangled", (): Tangled => {
  const cyc: Tangled["cyc"] = { n: 1 };
  cyc.self = cyc;
  const shared = { x: 1 };
  const sparse = [1];
  sparse[3] = 4;
  return { cyc, pair: [shared, shared], sparse, proto: JSON.parse('{"__proto__": 1}') as object };
});

/** What of a {@link tangled} value survived, as the task receiving it sees it. */
export const inspectTangled = defineTask("inspectTangled", (v: Tangled) => ({
  cycle: v.cyc.self === v.cyc,
  shared: v.pair[0] === v.pair[1],
  hole: !(1 in v.sparse) && v.sparse.length === 4,
  protoKey: Object.keys(v.proto).join(),
}));

/** `n` bytes `i % 251`. */
export const bytes = defineTask("bytes", (n: number) =>
  Uint8Array.from({ length: n }, (_, i) => i % 251),
);

/** The sum of the bytes. */
export const byteSum = defineTask("byteSum", (b: Uint8Array) => b.reduce((a, x) => a + x, 0));
/** The sum of the bytes, after `ms` milliseconds. */
export const slowByteSum = defineTask("slowByteSum", async (b: Uint8Array, ms: number) => {
  await sleep(ms);
  return b.reduce((a, x) => a + x, 0);
});
/** What a task sees of a byte argument: its class, its size, whether it lies aligned, and a checksum. */
export const describeBytes = defineTask(
  "describeBytes",
  (
    v: ArrayBufferView | ArrayBuffer,
  ): { type: string; byteLength: number; aligned: boolean; sum: number } => {
    const bytes =
      v instanceof ArrayBuffer
        ? new Uint8Array(v)
        : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    let sum = 0;
    for (let i = 0; i < bytes.length; i++) sum = (sum * 31 + bytes[i]) % 1_000_000_007;
    const width = ArrayBuffer.isView(v)
      ? ((v as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1)
      : 1;
    return {
      type: v.constructor.name,
      byteLength: v.byteLength,
      aligned: bytes.byteOffset % width === 0,
      sum,
    };
  },
);
/** Throws an error some of whose fields cannot be read (a getter that throws, a Proxy, one whose prototype cannot be read). */
export const unreadableError = defineTask("unreadableError", (kind: string): number => {
  const e = new Error("plain");
  if (kind === "message") {
    Object.defineProperty(e, "message", {
      get() {
        throw new Error("message getter");
      },
    });
    throw e;
  }
  if (kind === "stack") {
    Object.defineProperty(e, "stack", {
      get() {
        throw new Error("stack getter");
      },
    });
    throw e;
  }
  if (kind === "proto") {
    throw new Proxy(e, {
      getPrototypeOf() {
        throw new Error("getPrototypeOf trap");
      },
    });
  }
  throw new Proxy(e, {
    get(t, p) {
      if (p === "message") throw new Error("proxy trap");
      return Reflect.get(t, p);
    },
  });
});

/** Returns a value whose `then` cannot be read: a getter that throws, or a revoked Proxy. */
export const unreadableThen = defineTask("unreadableThen", (kind: string): object => {
  if (kind === "getter") {
    return {
      // biome-ignore lint/suspicious/noThenProperty: the test is of a then that cannot be read
      get then() {
        throw new Error("then getter");
      },
    };
  }
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
});

/** Fibonacci numbers, each task submitting the two before it (a graph that grows as it runs). */
export const fib = defineTask("fib", async (n: number): Promise<number> => {
  if (n < 2) return n;
  return workerClient(async (client) => {
    const [a, b] = [client.submit(fib, n - 1), client.submit(fib, n - 2)];
    return (await a) + (await b);
  });
});

/** `inc` of each of `0..n-1` as tasks of their own, summed: a task mapping over the cluster. */
export const sumOfIncs = defineTask("sumOfIncs", async (n: number): Promise<number> => {
  const client = await getClient();
  secede();
  const values = await client.gather(
    client.map(
      inc,
      Array.from({ length: n }, (_, i) => i),
    ),
  );
  await rejoin();
  return values.reduce((a, b) => a + b, 0);
});

/**
 * Submits `inc(x)` through the task's client and returns the future itself (having
 * seceded, so as not to hold the thread `inc` needs), or with `wrap`, `{ f: future }`.
 */
export const returnsFuture = defineTask(
  "returnsFuture",
  async (x: number, wrap: boolean): Promise<unknown> => {
    const client = await getClient();
    const f = client.submit(inc, x);
    if (wrap) return { f };
    secede();
    return f;
  },
);

/**
 * Closes the task's client, as task code should not, then asks for it again: the
 * number of workers the client it gets sees.
 */
export const closesItsClient = defineTask("closesItsClient", async (): Promise<number> => {
  await (await getClient()).close();
  return (await (await getClient()).workers()).length;
});

/** Where the task's client is connected: its scheduler's address (after `holdMs` more). */
export const clientScheduler = defineTask(
  "clientScheduler",
  async (holdMs = 0): Promise<string> => {
    const client = await getClient();
    await sleep(holdMs);
    return client.address;
  },
);

/** Takes the lock `name` through the task's client and fails without releasing it. */
export const failsHoldingLock = defineTask("failsHoldingLock", async (name: string) => {
  await (await getClient()).lock(name).acquire();
  throw new ValueError(`failed holding ${name}`);
});

/** Hold the lock `name` for `ms` (the task's thread free meanwhile), then let it go: true. */
export const holdsLockFor = defineTask("holdsLockFor", async (name: string, ms: number) => {
  const lock = (await getClient()).lock(name);
  await lock.acquire();
  await sleep(ms);
  await lock.release();
  return true;
});

/** Add one to the variable `name`, under the lock `name`: tasks that must take turns. */
export const lockedIncrement = defineTask("lockedIncrement", async (name: string, i: number) => {
  const client = await getClient();
  const lock = client.lock(name);
  const counter = client.variable<number>(name);
  secede();
  await lock.acquire();
  try {
    const now = await counter.get();
    await sleep(1);
    await counter.set(now + 1);
  } finally {
    await lock.release();
  }
  await rejoin();
  return i;
});

/** An actor's class: a counter kept on the worker that made it. */
export class Counter {
  n: number;
  /** A field that is an object: a call of it is told to read it. */
  readonly notes: string[] = [];
  constructor(start = 0) {
    this.n = start;
  }
  increment(by = 1): number {
    this.n += by;
    return this.n;
  }
  /** Adds after `ms`: calls of an async method interleave at its awaits. */
  async slowIncrement(by: number, ms: number): Promise<number> {
    await sleep(ms);
    this.n += by;
    return this.n;
  }
  fail(message: string): number {
    throw new ValueError(message);
  }
  /** Adds the count of another actor, read through its handle. */
  async addFrom(other: Actor<Counter>): Promise<number> {
    this.n += await other.get("n");
    return this.n;
  }
  /** Prints `text` with `print` (a task's message, of the actor's key), and returns the count. */
  say(text: string): number {
    print(text);
    return this.n;
  }
  /** The scheduler of the client a method gets with `getClient()`. */
  async clientScheduler(): Promise<string> {
    return (await getClient()).address;
  }
}

/** Makes a {@link Counter}: submitted with `{ actor: true }`, an actor. */
export const counter = defineTask("counter", (start = 0) => new Counter(start));

/** Increments the counter actor `c` `times` times, one call after another: the last count. */
export const bump = defineTask("bump", async (c: Actor<Counter>, times: number) => {
  let last = 0;
  for (let i = 0; i < times; i++) last = await c.call("increment", 1);
  return last;
});

/** Calls the counter actor `c`'s `slowIncrement` (2 s on its worker): a call in flight a while. */
export const incrementSlowly = defineTask("incrementSlowly", (c: Actor<Counter>) =>
  c.call("slowIncrement", 1, 2_000),
);

/** Logs `{ task: n }` under `topic` through the task's client (`Client.logEvent`), and returns n. */
export const logsEvent = defineTask("logsEvent", async (topic: string, n: number) => {
  const client = await getClient();
  await client.logEvent(topic, { task: n });
  return n;
});

/**
 * What the test worker plugins saw, in order (process-wide: the workers of a test
 * cluster run in the test's process, and their plugins are made on the main thread).
 */
export const PLUGIN_LOG: string[] = ((globalThis as Record<symbol, unknown>)[
  Symbol.for("weft.test.pluginLog")
] ??= []) as string[];

/** A worker plugin logging its setup, its tasks reaching memory and its teardown under `label`. */
export const recordingPlugin = defineTask("recordingPlugin", (label: string) => ({
  setup(worker: { address: string }) {
    PLUGIN_LOG.push(`${label} setup ${worker.address}`);
  },
  transition(key: string, _start: string, finish: string) {
    if (finish === "memory") PLUGIN_LOG.push(`${label} ${key} memory`);
  },
  teardown(worker: { address: string }) {
    PLUGIN_LOG.push(`${label} teardown ${worker.address}`);
  },
}));

/** A worker plugin whose setup throws. */
export const failingPlugin = defineTask("failingPlugin", () => ({
  setup() {
    throw new ValueError("no setup today");
  },
}));

/** A worker plugin that sets up on the workers at `addresses` only, and throws on any other. */
export const pickyPlugin = defineTask("pickyPlugin", (addresses: string[]) => ({
  setup(worker: { address: string }) {
    if (!addresses.includes(worker.address)) {
      throw new ValueError(`not on ${worker.address}`);
    }
    PLUGIN_LOG.push(`picky setup ${worker.address}`);
  },
}));

/** A worker plugin whose transition hook throws on every transition to memory. */
export const throwingTransitionPlugin = defineTask("throwingTransitionPlugin", () => ({
  transition(key: string, _start: string, finish: string) {
    if (finish === "memory") throw new ValueError(`no transition today (${key})`);
  },
}));

/**
 * What the setup of {@link gatedPlugin} waits on (process-wide, as {@link PLUGIN_LOG}):
 * a test replaces `wait` to hold it.
 */
export const PLUGIN_GATE: { wait: Promise<void> } = ((globalThis as Record<symbol, unknown>)[
  Symbol.for("weft.test.pluginGate")
] ??= { wait: Promise.resolve() }) as { wait: Promise<void> };

/** A worker plugin whose setup waits on {@link PLUGIN_GATE}. */
export const gatedPlugin = defineTask("gatedPlugin", () => ({
  async setup() {
    await PLUGIN_GATE.wait;
  },
}));

/**
 * Open {@link TASK_GATE} and {@link PLUGIN_GATE}, empty {@link PLUGIN_LOG} and
 * forget {@link flaky}'s attempts: this module's process-wide state as a fresh
 * process has it. Test files sharing a process (`test/sharedClusterSetup.ts`)
 * start from it, so that a file that failed with a gate closed fails alone.
 */
export function resetTestTaskState(): void {
  TASK_GATE.wait = Promise.resolve();
  PLUGIN_GATE.wait = Promise.resolve();
  PLUGIN_LOG.length = 0;
  attempts.clear();
}

/** Not a worker plugin: a number. */
export const notAPlugin = defineTask("notAPlugin", () => 42);

/** Puts `{ task: i }` for i < n under `name` through the task's client (`Client.pub`), and returns n. */
export const publishes = defineTask("publishes", async (name: string, n: number) => {
  const pub = (await getClient()).pub(name);
  for (let i = 0; i < n; i++) pub.put({ task: i });
  return n;
});

/** Subscribes to `name` through the task's client, and returns the first `n` messages put under it. */
export const collectsMessages = defineTask(
  "collectsMessages",
  async (name: string, n: number): Promise<unknown[]> => {
    const sub = await (await getClient()).sub(name);
    const got: unknown[] = [];
    for await (const msg of sub) {
      got.push(msg);
      if (got.length === n) break;
    }
    return got;
  },
);

/** Fires and forgets `publishes(name, 1)` through the task's client, and returns at once. */
export const firesAndForgets = defineTask("firesAndForgets", async (name: string) => {
  const client = await getClient();
  client.fireAndForget(client.submit(publishes, name, 1));
  return "fired";
});

/** Prints `line i {i}` for i < n and warns once (`print`, `warn`), then returns n. */
export const printsLines = defineTask("printsLines", (n: number) => {
  for (let i = 0; i < n; i++) print("line", i, { i });
  warn("careful");
  return n;
});
