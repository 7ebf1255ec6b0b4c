/**
 * The requests a client makes of the scheduler server itself rather than of
 * the state machine: where keys are held, what workers hold, the server's
 * counters, the connected workers, the published datasets. Each is answered
 * with a `reply` on the client's stream.
 */

import { CachedClonedValue } from "../comm/cachedClonedValue.ts";
import { ClonedValue } from "../comm/clonedValue.ts";
import { openedValue } from "../comm/openedValue.ts";
import {
  type AmmMethod,
  type ClientRequestOp,
  type CoordinationOp,
  type NannyPluginSpec,
  nannyPluginSpecProblem,
  noPluginRecorded,
  type ReplyMsg,
  type WorkerIdentity,
  type WorkerPluginSpec,
  workerPluginSpecProblem,
} from "../protocol/messagesSession.ts";
import { logCountProblem } from "../util/logRecords.ts";
import { showValue } from "../util/showValue.ts";
import { newStimulusId } from "../util/stimulusId.ts";
import { wallSeconds } from "../util/wallClock.ts";
import { checkProfileSettings } from "../worker/profiler.ts";
import { type RegisteredWorkers, unaskedOf } from "./askedWorkers.ts";
import { COORDINATION_OPS, DEFERRED } from "./coordination/coordination.ts";
import { CoordinationRefusal } from "./coordination/refusal.ts";
import { dumpedLogEntry, schedulerDumpInParts } from "./dumpState.ts";
import { RequestRefusal } from "./requestRefusal.ts";
import type { SessionHost } from "./sessionHost.ts";
import { schedulerStory } from "./state/story.ts";
import { recordUpload } from "./uploadRecord.ts";

const REQUEST_OPS: ReadonlySet<string> = new Set<ClientRequestOp>([
  "who-has",
  "has-what",
  "processing",
  "nbytes",
  "counters",
  "workers",
  "list-datasets",
  "load-task-modules",
  "upload-file",
  "register-worker-plugin",
  "unregister-worker-plugin",
  "register-nanny-plugin",
  "unregister-nanny-plugin",
  "shutdown",
  "task-stream",
  "logs",
  "retry",
  "dump-state",
  "story",
  "log-event",
  "get-events",
  "subscribe-topic",
  "unsubscribe-topic",
  "pubsub-subscribe",
  "pubsub-unsubscribe",
  "pubsub-subscribers",
  "set-metadata",
  "get-metadata",
  "run-on-scheduler",
  "register-scheduler-plugin",
  "unregister-scheduler-plugin",
  "profile-start",
  "profile-stop",
  "amm",
  ...COORDINATION_OPS,
]);

/**
 * The requests answered once what they start has run: the code they run on
 * the scheduler (see `schedulerCode.ts`), or its profiler; and `dump-state`,
 * encoded over several turns (see `schedulerParts.ts`).
 */
type CodeOp =
  | "dump-state"
  | "run-on-scheduler"
  | "register-scheduler-plugin"
  | "unregister-scheduler-plugin"
  | "profile-start"
  | "profile-stop";
const CODE_OPS: ReadonlySet<string> = new Set<CodeOp>([
  "dump-state",
  "run-on-scheduler",
  "register-scheduler-plugin",
  "unregister-scheduler-plugin",
  "profile-start",
  "profile-stop",
]);
const COORDINATION: ReadonlySet<string> = new Set(COORDINATION_OPS);

/**
 * What the scheduler logs when a request of {@link CODE_OPS} failed: one that
 * runs the scheduler's code says so; the others (a dump, the profiler) name
 * themselves, as nothing of the user's code failed there.
 */
function failedLine(op: CodeOp): string {
  switch (op) {
    case "run-on-scheduler":
    case "register-scheduler-plugin":
    case "unregister-scheduler-plugin":
      return "a client's request of the scheduler's code failed";
    default:
      return `a client's ${op} request failed`;
  }
}

/** True if `op` names a request to the server. */
export function isRequestOp(op: unknown): op is ClientRequestOp {
  return typeof op === "string" && REQUEST_OPS.has(op);
}

/** A topic name; not `__proto__`, which as a key of the replies would set their prototype. */
function isTopic(v: unknown): v is string {
  return typeof v === "string" && v !== "" && v !== "__proto__";
}

/**
 * A publish–subscribe name: any non-empty string, as the client's `pub` and
 * `sub` take. `__proto__` included: the broker keeps names in Maps, and no
 * reply is keyed by them (refused as a topic, it could be published to but
 * never subscribed to).
 */
function isPubSubName(v: unknown): v is string {
  return typeof v === "string" && v !== "";
}

function isTopicList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every(isTopic);
}

function isKeyList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((k) => typeof k === "string");
}

const AMM_METHODS: ReadonlySet<string> = new Set<AmmMethod>([
  "start",
  "stop",
  "status",
  "run-once",
]);

/**
 * The answer to an `amm` request of `client` (see `AmmRequestMsg`): the
 * Active Memory Manager's status once it is started or stopped, or the
 * replicas a round run now asked workers to drop. A start or stop that
 * changes something is logged.
 */
function answerAmm(host: SessionHost, client: string, method: unknown): unknown {
  if (typeof method !== "string" || !AMM_METHODS.has(method)) {
    throw new TypeError(
      `amm: method must be one of ${[...AMM_METHODS].join(", ")}, got ${showValue(method)}`,
    );
  }
  const amm = host.amm;
  switch (method as AmmMethod) {
    case "start":
      if (!amm.running) {
        amm.start();
        host.logger.info(
          { client, intervalMs: amm.intervalMs },
          "a client started the active memory manager",
        );
      }
      return amm.status;
    case "stop":
      if (amm.running) {
        amm.stop();
        host.logger.info({ client }, "a client stopped the active memory manager");
      }
      return amm.status;
    case "status":
      return amm.status;
    case "run-once":
      return amm.runOnce();
  }
}

/** Keep `spec` in `plugins`, in place of one of its name: the plugins' names, in order. */
function recordPlugin<T extends WorkerPluginSpec>(plugins: T[], spec: T): string[] {
  const at = plugins.findIndex((p) => p.name === spec.name);
  if (at < 0) plugins.push(spec);
  else plugins[at] = spec;
  return plugins.map((p) => p.name);
}

/** Drop the plugin `name` from `plugins`, or throw if there is none: the names left, in order. */
function forgetPlugin(
  plugins: WorkerPluginSpec[],
  name: unknown,
  op: string,
  kind: "worker" | "nanny",
): string[] {
  const at = plugins.findIndex((p) => p.name === name);
  if (at < 0) throw new RequestRefusal(noPluginRecorded(op, kind, name));
  plugins.splice(at, 1);
  return plugins.map((p) => p.name);
}

function answer(host: SessionHost, client: string, msg: Record<string, unknown>): unknown {
  if (COORDINATION.has(msg.op as string)) {
    return host.coordination.answer(client, msg.op as CoordinationOp, msg);
  }
  switch (msg.op as Exclude<ClientRequestOp, CoordinationOp | CodeOp>) {
    case "who-has":
      if (msg.keys === undefined) return host.state.getWhoHas(host.state.tasks.keys());
      if (!isKeyList(msg.keys)) throw new TypeError("who-has: keys must be an array of keys");
      return host.state.getWhoHas(msg.keys);
    case "has-what":
      if (msg.workers === undefined) return host.state.getHasWhat(host.state.workers.keys());
      if (!isKeyList(msg.workers)) {
        throw new TypeError("has-what: workers must be an array of worker addresses");
      }
      return host.state.getHasWhat(msg.workers);
    case "processing":
      if (msg.workers === undefined) return host.state.getProcessing(host.state.workers.keys());
      if (!isKeyList(msg.workers)) {
        throw new TypeError("processing: workers must be an array of worker addresses");
      }
      return host.state.getProcessing(msg.workers);
    case "nbytes":
      if (msg.keys !== undefined && !isKeyList(msg.keys)) {
        throw new TypeError("nbytes: keys must be an array of keys");
      }
      if (msg.summary !== undefined && typeof msg.summary !== "boolean") {
        throw new TypeError("nbytes: summary must be a boolean");
      }
      return host.state.getNbytesOf(
        (msg.keys as readonly string[] | undefined) ?? null,
        msg.summary === true,
      );
    case "counters":
      return host.counters.snapshot(host.state, host.router.clients.size);
    case "amm":
      return answerAmm(host, client, msg.method);
    case "load-task-modules": {
      const modules = msg.modules;
      if (!isKeyList(modules) || !modules.every((m) => URL.canParse(m))) {
        throw new TypeError("load-task-modules: modules must be an array of URLs");
      }
      const unasked = unaskedOf(
        "load-task-modules",
        host.state.workers.keys(),
        msg.asked,
        registered(host, msg),
      );
      if (unasked !== null) return unasked;
      for (const m of modules) if (!host.taskModules.includes(m)) host.taskModules.push(m);
      return [...host.taskModules];
    }
    case "upload-file":
      return recordUpload(host.uploads, host.state.workers.keys(), msg, (a) =>
        host.router.registrationOf(a),
      );
    case "register-worker-plugin": {
      const problem = workerPluginSpecProblem(msg);
      if (problem !== null) throw new TypeError(`register-worker-plugin: ${problem}`);
      const spec: WorkerPluginSpec = {
        name: msg.name as string,
        fn: msg.fn as string,
        args: [...(msg.args as unknown[])],
      };
      const unasked = unaskedOf(
        "register-worker-plugin",
        host.state.workers.keys(),
        msg.asked,
        registered(host, msg),
      );
      return unasked ?? recordPlugin(host.workerPlugins, spec);
    }
    case "unregister-worker-plugin":
      return forgetPlugin(host.workerPlugins, msg.name, "unregister-worker-plugin", "worker");
    case "register-nanny-plugin": {
      const problem = nannyPluginSpecProblem(msg);
      if (problem !== null) throw new TypeError(`register-nanny-plugin: ${problem}`);
      const spec: NannyPluginSpec = {
        name: msg.name as string,
        fn: msg.fn as string,
        args: [...(msg.args as unknown[])],
        ...(typeof msg.restart === "boolean" ? { restart: msg.restart } : {}),
      };
      // Only the workers with a nanny take nanny plugins: the client asks those.
      const nannied = [...host.state.workers.values()].filter((ws) => ws.nanny);
      const unasked = unaskedOf(
        "register-nanny-plugin",
        nannied.map((ws) => ws.address),
        msg.asked,
        registered(host, msg),
      );
      return unasked ?? recordPlugin(host.nannyPlugins, spec);
    }
    case "unregister-nanny-plugin":
      return forgetPlugin(host.nannyPlugins, msg.name, "unregister-nanny-plugin", "nanny");
    case "shutdown":
      return host.shutdownCluster();
    case "task-stream": {
      const { since, count } = msg;
      if (since !== undefined && (typeof since !== "number" || !Number.isFinite(since))) {
        throw new TypeError("task-stream: since must be a number of seconds");
      }
      if (count !== undefined && (!Number.isSafeInteger(count) || (count as number) < 0)) {
        throw new TypeError("task-stream: count must be an integer ≥ 0");
      }
      return host.taskStream.query({
        ...(since !== undefined ? { since: since as number } : {}),
        ...(count !== undefined ? { count: count as number } : {}),
      });
    }
    case "logs": {
      const problem = logCountProblem(msg.n);
      if (problem !== null) throw new TypeError(`logs: ${problem}`);
      return host.logRecords.recent(msg.n as number | undefined);
    }
    case "log-event": {
      const topics = msg.topics;
      if (!isTopicList(topics) || topics.length === 0) {
        throw new TypeError("log-event: topics must be a non-empty array of non-empty strings");
      }
      // Sent again in every get-events answer covering it: its bytes made once.
      host.events.log(topics, CachedClonedValue.of(msg.msg), wallSeconds());
      return null;
    }
    case "get-events":
      if (msg.topic === undefined) return host.events.all();
      if (!isTopic(msg.topic)) throw new TypeError("get-events: topic must be a non-empty string");
      return host.events.get(msg.topic);
    case "subscribe-topic":
    case "unsubscribe-topic":
      if (!isTopic(msg.topic)) throw new TypeError(`${msg.op}: topic must be a non-empty string`);
      if (msg.op === "subscribe-topic") host.events.subscribe(msg.topic, client);
      else host.events.unsubscribe(msg.topic, client);
      return null;
    case "pubsub-subscribe":
    case "pubsub-unsubscribe":
    case "pubsub-subscribers":
      if (!isPubSubName(msg.name)) {
        throw new TypeError(`${msg.op}: name must be a non-empty string`);
      }
      if (msg.op === "pubsub-subscribers") return host.pubsub.subscriberCount(msg.name);
      if (msg.op === "pubsub-subscribe") host.pubsub.subscribe(msg.name, client);
      else host.pubsub.unsubscribe(msg.name, client);
      return null;
    case "set-metadata":
    case "get-metadata": {
      const keys = msg.keys;
      if (!isKeyList(keys)) throw new TypeError(`${msg.op}: keys must be an array of strings`);
      if (msg.op === "get-metadata") {
        const got = host.metadata.get(keys);
        // Wrapped, so that it travels with the structured-clone algorithm, as it came.
        return got.found ? { found: true, value: new ClonedValue(got.value) } : got;
      }
      // Read, not only held: a typed array forwarded unread would be kept as `{}`.
      host.metadata.set(keys, openedValue(msg.value));
      return null;
    }
    case "story":
      if (!isKeyList(msg.keys)) throw new TypeError("story: keys must be an array of keys");
      // Not spread into story(...keys): 200,000 keys overflow the call's arguments.
      return schedulerStory(new Set(msg.keys), host.state.log).map(dumpedLogEntry);
    case "retry": {
      if (!isKeyList(msg.keys)) throw new TypeError("retry: keys must be an array of keys");
      const erred = msg.keys.filter((k) => host.state.tasks.get(k)?.state === "erred");
      if (erred.length === 0) return [];
      host.dispatch([
        {
          kind: "client-message",
          msg: { op: "retry", keys: erred, clientId: client, stimulusId: newStimulusId("retry") },
        },
      ]);
      return erred.filter((k) => host.state.tasks.get(k)?.state !== "erred");
    }
    case "list-datasets":
      return [...host.state.datasets.keys()].sort();
    case "workers": {
      const out: WorkerIdentity[] = [];
      for (const ws of host.state.workers.values()) {
        const id = host.router.registrationOf(ws.address);
        out.push({
          address: ws.address,
          name: ws.name,
          nthreads: ws.nthreads,
          resources: { ...ws.resources },
          status: ws.status,
          processing: ws.processing.size,
          keys: ws.hasWhat.size,
          nbytes: ws.nbytes,
          spilled: ws.spilled,
          memoryLimit: ws.memoryLimit,
          memory: ws.memory,
          nanny: ws.nanny,
          actors: ws.actors.size,
          ...(id !== undefined ? { id } : {}),
        });
      }
      return out;
    }
  }
}

/** The registrations a record `msg` names as asked, and those of the workers there. */
function registered(host: SessionHost, msg: Record<string, unknown>): RegisteredWorkers {
  return { askedIds: msg.askedIds, idOf: (address) => host.router.registrationOf(address) };
}

/** The answer to a request of {@link CODE_OPS}, once the code it runs has run; throws if `msg` is malformed. */
async function answerLater(
  host: SessionHost,
  client: string,
  msg: Record<string, unknown>,
): Promise<unknown> {
  switch (msg.op as CodeOp) {
    case "dump-state":
      return schedulerDumpInParts(host.state, {
        address: host.address,
        status: host.isRunning ? "running" : "closing",
      });
    case "run-on-scheduler": {
      const { fn, args } = msg;
      if (typeof fn !== "string" || fn === "" || !Array.isArray(args)) {
        throw new TypeError(
          "run-on-scheduler: expected {fn: a task function's name, args: an array}",
        );
      }
      // The function reads them: a typed array forwarded unread would be an empty object.
      const outcome = await host.code.run(fn, args.map(openedValue));
      // Wrapped, so that the value travels as the function gave it.
      return outcome.status === "OK"
        ? { status: "OK", value: new ClonedValue(outcome.value) }
        : outcome;
    }
    case "register-scheduler-plugin": {
      const problem = workerPluginSpecProblem(msg);
      if (problem !== null) {
        throw new TypeError(
          `register-scheduler-plugin: ${problem.replace("worker plugin", "scheduler plugin")}`,
        );
      }
      return host.code.addPlugin(msg.name as string, msg.fn as string, msg.args as unknown[]);
    }
    case "unregister-scheduler-plugin":
      if (typeof msg.name !== "string" || msg.name === "") {
        throw new TypeError("unregister-scheduler-plugin: name must be a non-empty string");
      }
      return host.plugins.remove(msg.name);
    case "profile-start": {
      if (typeof msg.id !== "string" || msg.id === "") {
        throw new TypeError("profile-start: id must be a non-empty string");
      }
      const settings = checkProfileSettings("profile-start", msg.intervalUs, msg.maxMs);
      // Discarded if this client is removed before it stops it (see clientProfiles.ts).
      await host.profiler.start(msg.id, settings, client);
      if (!host.router.clients.has(client)) host.profiler.discard(msg.id);
      return "OK";
    }
    case "profile-stop":
      if (typeof msg.id !== "string") throw new TypeError("profile-stop: id must be a string");
      return host.profiler.stop(msg.id);
  }
}

/**
 * The reply to the request `msg` (whose op {@link isRequestOp}) of `client`;
 * null for a malformed one, and for one answered later: by a coordination
 * primitive, or once the code it runs on the scheduler has run.
 */
export function replyTo(
  host: SessionHost,
  client: string,
  msg: Record<string, unknown>,
): ReplyMsg | null {
  const requestId = msg.requestId;
  if (!Number.isSafeInteger(requestId)) {
    host.counters.rejectedMessages++;
    host.logger.error({ op: msg.op }, "rejected a malformed request: requestId must be an integer");
    return null;
  }
  if (CODE_OPS.has(msg.op as string)) {
    const id = requestId as number;
    void answerLater(host, client, msg).then(
      (result) => host.router.toClient(client, { op: "reply", requestId: id, result }),
      (err: unknown) => {
        const why = err instanceof Error ? err.message : String(err);
        host.logger.warn({ op: msg.op, reason: why }, failedLine(msg.op as CodeOp));
        host.router.toClient(client, { op: "reply", requestId: id, error: why });
      },
    );
    return null;
  }
  try {
    const result = answer(host, client, msg);
    unpublishReplacedValues(host, client);
    if (result === DEFERRED) return null;
    return { op: "reply", requestId: requestId as number, result };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    if (err instanceof RequestRefusal) {
      // The user's mistake, told to their client: nothing wrong with the scheduler or the message.
      const what =
        err instanceof CoordinationRefusal ? "refused a coordination request" : "refused a request";
      host.logger.debug({ client, op: msg.op, reason: why }, what);
    } else {
      host.counters.rejectedMessages++;
      host.logger.error({ op: msg.op, reason: why }, "rejected a malformed request");
    }
    return { op: "reply", requestId: requestId as number, error: why };
  }
}

/**
 * Unpublish the datasets that held the futures of the variables' values the
 * request just replaced or deleted: under `client`'s id, whose requests match
 * their answers by stimulus id, so that it ignores these answers.
 */
function unpublishReplacedValues(host: SessionHost, client: string): void {
  const names = host.coordination.takeDatasetsToLetGo();
  if (names.length === 0) return;
  const stimulusId = newStimulusId("variable-replaced");
  host.dispatch(
    names.map((name) => ({
      kind: "client-message" as const,
      msg: { op: "unpublish-dataset" as const, name, clientId: client, stimulusId },
    })),
  );
}
