/**
 * Well-formed templates of every message a client, a worker or a peer sends, and the
 * mutations that make them hostile: a field replaced by an odd value, a field
 * dropped, a field added, or the message left well formed but naming keys and
 * workers that do not exist (or the real ones, at the wrong time).
 */

import { EDGE_VALUES } from "./values.ts";

/** A small seeded generator (mulberry32): the same seed, the same messages. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** What the templates may name: keys and workers that exist, and others. */
export interface World {
  /** Keys of the real graph, some in memory. */
  readonly keys: readonly string[];
  /** The real worker's address. */
  readonly worker: string;
  /** The fake worker's address (registered by the harness), if any. */
  readonly fakeWorker: string;
  /** The id of a client that stays connected (the profiles a worker names are its, or not). */
  readonly client: string;
  /** fast-check's `anything()` samples. */
  readonly pool: readonly unknown[];
}

let sid = 0;
const stim = () => `fuzz-${++sid}`;

function someKey(r: Rng, w: World): string {
  return r.chance(0.6) ? r.pick(w.keys) : r.pick(["never-existed", "k", "__proto__", "x-0"]);
}

function someKeys(r: Rng, w: World): string[] {
  const n = r.int(4);
  return Array.from({ length: n }, () => someKey(r, w));
}

/** An odd value: a hand-picked edge, an `anything()` sample, or a name of the world. */
export function oddValue(r: Rng, w: World): unknown {
  const roll = r.next();
  if (roll < 0.35) return r.pick(EDGE_VALUES);
  if (roll < 0.85) return r.pick(w.pool);
  return r.chance(0.5) ? someKey(r, w) : r.pick([w.worker, w.fakeWorker]);
}

/** The client→scheduler templates, by op (without clientId, added by the session). */
export const CLIENT_TEMPLATES: Record<string, (r: Rng, w: World) => Record<string, unknown>> = {
  "update-graph": (r, w) => {
    const key = r.chance(0.5) ? someKey(r, w) : `fuzz-new-${r.int(50)}`;
    const dep = someKey(r, w);
    const tasks = new Map<unknown, unknown>([
      [
        key,
        {
          spec: { fn: r.pick(["chaos.add", "no.such.fn"]), args: [{ __weftRef: dep }, 1, 0] },
          dependencies: r.chance(0.8) ? [dep] : [],
          ...(r.chance(0.3) ? { priority: oddValue(r, w) } : {}),
          ...(r.chance(0.3) ? { retries: oddValue(r, w) } : {}),
          ...(r.chance(0.3) ? { resources: oddValue(r, w) } : {}),
          ...(r.chance(0.3) ? { workers: oddValue(r, w) } : {}),
          ...(r.chance(0.2) ? { allowOtherWorkers: oddValue(r, w) } : {}),
          ...(r.chance(0.2) ? { actor: oddValue(r, w) } : {}),
          ...(r.chance(0.2) ? { annotations: oddValue(r, w) } : {}),
        },
      ],
    ]);
    if (r.chance(0.3)) tasks.set(oddValue(r, w), oddValue(r, w));
    return { op: "update-graph", tasks, keys: [key], submission: r.int(100) };
  },
  "client-releases-keys": (r, w) => ({ op: "client-releases-keys", keys: someKeys(r, w) }),
  "client-desires-keys": (r, w) => ({ op: "client-desires-keys", keys: someKeys(r, w) }),
  "cancel-keys": (r, w) => ({ op: "cancel-keys", keys: someKeys(r, w), force: r.chance(0.5) }),
  "close-client": () => ({ op: "close-client" }),
  "fire-and-forget": (r, w) => ({ op: "fire-and-forget", keys: someKeys(r, w) }),
  "publish-dataset": (r, w) => ({
    op: "publish-dataset",
    name: r.pick(["ds", "ds2", "__proto__"]),
    keys: someKeys(r, w),
    data: oddValue(r, w),
    override: r.chance(0.5),
  }),
  "get-dataset": (r) => ({ op: "get-dataset", name: r.pick(["ds", "nope"]) }),
  "unpublish-dataset": (r) => ({ op: "unpublish-dataset", name: r.pick(["ds", "nope"]) }),
  "update-data": (r, w) => ({
    op: "update-data",
    keys: [
      {
        key: someKey(r, w),
        workers: [r.pick([w.worker, w.fakeWorker, "tcp://127.0.0.1:1"])],
        nbytes: r.int(1000),
        typename: "number",
      },
    ],
  }),
  replicate: (r, w) => ({ op: "replicate", keys: someKeys(r, w), n: r.int(3) }),
  rebalance: (r, w) => ({ op: "rebalance", keys: someKeys(r, w) }),
  // Never the real worker: retiring it is what the op is for.
  "retire-workers": (r, w) => ({ op: "retire-workers", workers: [r.pick(["nope", w.fakeWorker])] }),
  retry: (r, w) => ({ op: "retry", keys: someKeys(r, w), requestId: r.int(1e6) }),
  "pubsub-put": (r, w) => ({ op: "pubsub-put", name: "t", msg: oddValue(r, w) }),
  // Requests of the server (answered with a reply).
  "who-has": (r, w) => ({ op: "who-has", keys: someKeys(r, w) }),
  "has-what": (_r, w) => ({ op: "has-what", workers: [w.worker] }),
  processing: (_r, w) => ({ op: "processing", workers: [w.worker] }),
  nbytes: (r, w) => ({ op: "nbytes", keys: someKeys(r, w), summary: r.chance(0.5) }),
  counters: () => ({ op: "counters" }),
  workers: () => ({ op: "workers" }),
  "list-datasets": () => ({ op: "list-datasets" }),
  "task-stream": (r) => ({ op: "task-stream", since: 0, count: r.int(10) }),
  logs: (r) => ({ op: "logs", n: r.int(10) }),
  story: (r, w) => ({ op: "story", keys: someKeys(r, w) }),
  "log-event": (r, w) => ({ op: "log-event", topics: ["t"], msg: oddValue(r, w) }),
  // Not log-event's topic: each answer would carry every odd event logged (some of 100,000
  // keys or characters), and a thousand of them kept the scheduler encoding for minutes.
  "get-events": () => ({ op: "get-events", topic: "t2" }),
  "subscribe-topic": () => ({ op: "subscribe-topic", topic: "t" }),
  "unsubscribe-topic": () => ({ op: "unsubscribe-topic", topic: "t" }),
  "pubsub-subscribe": () => ({ op: "pubsub-subscribe", name: "t" }),
  "pubsub-unsubscribe": () => ({ op: "pubsub-unsubscribe", name: "t" }),
  "pubsub-subscribers": () => ({ op: "pubsub-subscribers", name: "t" }),
  "set-metadata": (r, w) => ({ op: "set-metadata", keys: ["a", "b"], value: oddValue(r, w) }),
  "get-metadata": () => ({ op: "get-metadata", keys: ["a"] }),
  "run-on-scheduler": (r, w) => ({
    op: "run-on-scheduler",
    fn: "no.such.fn",
    args: [oddValue(r, w)],
  }),
  "dump-state": () => ({ op: "dump-state" }),
  "profile-start": () => ({ op: "profile-start", id: "p", intervalUs: 1000, maxMs: 100 }),
  "profile-stop": () => ({ op: "profile-stop", id: "p" }),
  amm: (r) => ({ op: "amm", method: r.pick(["status", "run-once", "start", "stop"]) }),
  "unregister-worker-plugin": () => ({ op: "unregister-worker-plugin", name: "nope" }),
  "register-worker-plugin": (r, w) => ({
    op: "register-worker-plugin",
    name: "p",
    fn: "no.such.fn",
    args: [oddValue(r, w)],
  }),
  "unregister-scheduler-plugin": () => ({ op: "unregister-scheduler-plugin", name: "nope" }),
  "semaphore-acquire": (r) => ({
    op: "semaphore-acquire",
    name: "s",
    maxLeases: 1,
    lease: `l${r.int(5)}`,
    timeoutMs: 0,
  }),
  "semaphore-release": (r) => ({ op: "semaphore-release", name: "s", lease: `l${r.int(5)}` }),
  "semaphore-leases": () => ({ op: "semaphore-leases", name: "s" }),
  "lock-acquire": (r) => ({ op: "lock-acquire", name: "l", lease: `l${r.int(5)}`, timeoutMs: 0 }),
  "lock-release": (r) => ({ op: "lock-release", name: "l", lease: `l${r.int(5)}` }),
  "lock-leases": () => ({ op: "lock-leases", name: "l" }),
  "event-set": () => ({ op: "event-set", name: "e" }),
  "event-clear": () => ({ op: "event-clear", name: "e" }),
  "event-is-set": () => ({ op: "event-is-set", name: "e" }),
  "event-wait": () => ({ op: "event-wait", name: "e", timeoutMs: 0 }),
  "variable-set": (r, w) => ({ op: "variable-set", name: "v", value: oddValue(r, w), key: null }),
  "variable-get": () => ({ op: "variable-get", name: "v", timeoutMs: 0 }),
  "variable-delete": () => ({ op: "variable-delete", name: "v" }),
  "queue-put": (r, w) => ({
    op: "queue-put",
    name: "q",
    value: oddValue(r, w),
    key: null,
    timeoutMs: 0,
    maxsize: 0,
  }),
  "queue-get": () => ({ op: "queue-get", name: "q", timeoutMs: 0, maxsize: 0 }),
  "queue-get-batch": (r) => ({ op: "queue-get-batch", name: "q", n: r.int(3), maxsize: 0 }),
  "queue-size": () => ({ op: "queue-size", name: "q" }),
  "multi-lock-acquire": (r) => ({
    op: "multi-lock-acquire",
    names: ["a", "b"],
    id: `m${r.int(3)}`,
    timeoutMs: 0,
    numLocks: 1,
  }),
  "multi-lock-release": (r) => ({ op: "multi-lock-release", id: `m${r.int(3)}` }),
  "lease-refresh": (r) => ({ op: "lease-refresh", leases: [`l${r.int(5)}`] }),
};

/** The worker→scheduler templates, by op (the fake worker's stream). */
export const WORKER_TEMPLATES: Record<string, (r: Rng, w: World) => Record<string, unknown>> = {
  "heartbeat-worker": (r) => ({
    op: "heartbeat-worker",
    memory: r.int(1e9),
    spilled: { keys: r.int(5), bytes: r.int(1e6) },
  }),
  "worker-status-change": (r) => ({
    op: "worker-status-change",
    status: r.pick(["running", "paused"]),
  }),
  "task-finished": (r, w) => ({
    op: "task-finished",
    key: someKey(r, w),
    runId: r.int(20),
    nbytes: r.int(1000),
    typename: "number",
    startstops: [{ action: "compute", start: 1, stop: 2 }],
    metadata: {},
    thread: 0,
  }),
  "task-erred": (r, w) => ({
    op: "task-erred",
    key: someKey(r, w),
    runId: r.int(20),
    exception: { name: "Error", message: "boom" },
    traceback: null,
    exceptionText: "boom",
    tracebackText: "",
    fetchFailed: r.chance(0.3),
  }),
  "add-keys": (r, w) => ({ op: "add-keys", keys: someKeys(r, w) }),
  "release-worker-data": (r, w) => ({ op: "release-worker-data", key: someKey(r, w) }),
  reschedule: (r, w) => ({ op: "reschedule", key: someKey(r, w) }),
  "long-running": (r, w) => ({
    op: "long-running",
    key: someKey(r, w),
    computeDuration: 0.1,
    runId: r.int(20),
  }),
  "request-refresh-who-has": (r, w) => ({ op: "request-refresh-who-has", keys: someKeys(r, w) }),
  "steal-response": (r, w) => ({
    op: "steal-response",
    key: someKey(r, w),
    state: r.pick([null, "executing", "ready", "waiting", "memory"]),
  }),
  // The profiles a client started on the worker: its client connected or gone, an id
  // another worker named too, started after started (a flood), ended unknown.
  "profile-started": (r, w) => ({
    op: "profile-started",
    id: `p${r.int(5)}`,
    client: r.pick([w.client, w.client, "gone-client"]),
  }),
  "profile-ended": (r) => ({ op: "profile-ended", id: `p${r.int(5)}` }),
  "no-such-op": () => ({ op: "no-such-op" }),
};

/** The requests of a peer to a worker's server, by op (args only). */
export const PEER_TEMPLATES: Record<string, (r: Rng, w: World) => Record<string, unknown>> = {
  identity: () => ({}),
  get_data: (r, w) => ({
    keys: someKeys(r, w),
    who: r.pick([w.worker, "tcp://127.0.0.1:1", null]),
    peer: r.chance(0.5),
    maxMessageBytes: 1e6,
  }),
  update_data: (r, w) => ({ data: { [someKey(r, w)]: oddValue(r, w) }, report: r.chance(0.5) }),
  run: (r, w) => ({ fn: "no.such.fn", args: [oddValue(r, w)] }),
  actor_execute: (r, w) => ({ key: someKey(r, w), name: "add", args: [], kwargs: {} }),
  actor_attribute: (r, w) => ({ key: someKey(r, w), attribute: "total" }),
  get_logs: (r) => ({ n: r.int(10) }),
  dump_state: () => ({}),
  get_story: (r, w) => ({ keys: someKeys(r, w) }),
  plugin_remove: () => ({ name: "nope" }),
  nanny_plugin_remove: () => ({ name: "nope" }),
  profile_start: (r, w) => ({
    id: "p",
    intervalUs: 1000,
    maxMs: 100,
    // Told the scheduler, which discards it at once for a client not connected.
    ...(r.chance(0.5) ? { client: r.pick([w.client, "gone-client"]) } : {}),
  }),
  profile_stop: () => ({ id: "p" }),
  no_such_op: () => ({}),
};

let computed = 0;

/** The scheduler→worker templates, by op (the fake scheduler's stream). */
export const SCHEDULER_TEMPLATES: Record<string, (r: Rng, w: World) => Record<string, unknown>> = {
  "compute-task": (r, w) => {
    const dep = someKey(r, w);
    const hasDep = r.chance(0.5);
    return {
      op: "compute-task",
      // A new key each time: a compute-task of a task in error or fetch with a new
      // dependency fails the worker's state machine, as the seed's (Dask's) own
      // (src/worker/state/property.test.ts, "seed bugs"): kept, faithfully.
      key: `t-${++computed}`,
      runId: r.int(20),
      whoHas: hasDep ? { [dep]: [r.pick([w.worker, "tcp://127.0.0.1:1"])] } : {},
      nbytes: hasDep ? { [dep]: r.int(100) } : {},
      priority: [0, r.int(10)],
      duration: 0.1,
      runSpec: { fn: r.pick(["chaos.add", "no.such.fn"]), args: [1, 2, 0] },
      resourceRestrictions: {},
      actor: false,
      annotations: {},
    };
  },
  "free-keys": (r) => ({ op: "free-keys", keys: [`t-${r.int(30)}`] }),
  "remove-replicas": (r) => ({ op: "remove-replicas", keys: [`t-${r.int(30)}`] }),
  "acquire-replicas": (r, w) => {
    const k = `a-${r.int(30)}`;
    return { op: "acquire-replicas", whoHas: { [k]: [w.worker] }, nbytes: { [k]: r.int(100) } };
  },
  "refresh-who-has": (r) => ({
    op: "refresh-who-has",
    whoHas: { [`t-${r.int(30)}`]: ["tcp://127.0.0.1:1"] },
  }),
  "steal-request": (r) => ({ op: "steal-request", key: `t-${r.int(30)}` }),
  "remove-worker": (r, w) => ({
    op: "remove-worker",
    worker: r.pick([w.worker, "tcp://127.0.0.1:1"]),
  }),
  pause: () => ({ op: "pause" }),
  unpause: () => ({ op: "unpause" }),
  "profile-discard": (r) => ({ op: "profile-discard", id: r.pick(["p", "nope"]) }),
  "no-such-op": () => ({ op: "no-such-op" }),
};

/**
 * `msg` made hostile: usually a field or two replaced by odd values, dropped, or added;
 * sometimes left well formed (an odd sequence is the point then). `op` is kept.
 */
export function mutate(r: Rng, w: World, msg: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...msg, stimulusId: stim() };
  if (r.chance(0.15)) return out;
  const fields = Object.keys(out).filter((f) => f !== "op");
  const n = 1 + r.int(3);
  for (let i = 0; i < n; i++) {
    const roll = r.next();
    if (roll < 0.65 && fields.length > 0) out[r.pick(fields)] = oddValue(r, w);
    else if (roll < 0.85 && fields.length > 0) delete out[r.pick(fields)];
    else {
      // An own property, "__proto__" too (an assignment would set the prototype).
      const name = r.pick(["extra", "__proto__", "constructor", "key", "keys", "id"]);
      Object.defineProperty(out, name, {
        value: oddValue(r, w),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return out;
}
