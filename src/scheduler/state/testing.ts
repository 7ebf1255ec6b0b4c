/**
 * Builders for the stimuli of the scheduler state machine and readers for the
 * messages it returns, for tests and simulators. Every builder takes an
 * optional stimulus id and otherwise makes up a unique one.
 */

import type { SchedulerMessage } from "../../protocol/messages.ts";
import type { GraphTask } from "../../protocol/messagesClient.ts";
import type { TaskSpec } from "../../protocol/messagesTaskSpec.ts";
import { taskRef } from "../../protocol/messagesTaskSpec.ts";
import type {
  ComputeTaskMsg,
  RegisterWorkerMsg,
  Resources,
} from "../../protocol/messagesWorker.ts";
import type { TaskStateState } from "../../worker/state/taskState.ts";
import type { SchedulerEvent } from "./events.ts";
import { SchedulerState } from "./schedulerState.ts";

let counter = 0;

function sid(stimulusId: string | undefined, prefix: string): string {
  return stimulusId ?? `${prefix}-${++counter}`;
}

/** What else a worker may register with: a memory limit, a nanny, a name. */
export type RegistrationExtras = Pick<RegisterWorkerMsg, "memoryLimit" | "nanny" | "name">;

/** `register-worker` from `address`. */
export function registerWorker(
  address: string,
  nthreads = 1,
  resources: Resources = {},
  stimulusId?: string,
  extras: RegistrationExtras = {},
): SchedulerEvent {
  return {
    kind: "worker-message",
    worker: address,
    msg: {
      op: "register-worker",
      address,
      nthreads,
      resources,
      ...extras,
      stimulusId: sid(stimulusId, "register"),
    },
  };
}

/** The worker at `address` left. */
export function removeWorker(
  address: string,
  expected = false,
  stimulusId?: string,
): SchedulerEvent {
  return {
    kind: "remove-worker",
    worker: address,
    expected,
    stimulusId: sid(stimulusId, "remove"),
  };
}

/** A task running `fn` on `deps`' results (each passed as a task reference), with options. */
export function task(
  deps: readonly string[] = [],
  options: Omit<GraphTask, "spec" | "dependencies"> & { fn?: string } = {},
): GraphTask {
  const { fn = "f", ...rest } = options;
  const spec: TaskSpec = { fn, args: deps.map((d) => taskRef(d)) };
  return { spec, dependencies: deps, ...rest };
}

/** `update-graph` from `clientId`. */
export function updateGraph(
  clientId: string,
  tasks: Record<string, GraphTask>,
  keys: readonly string[],
  stimulusId?: string,
): SchedulerEvent {
  return {
    kind: "client-message",
    msg: {
      op: "update-graph",
      tasks: new Map(Object.entries(tasks)),
      keys,
      clientId,
      stimulusId: sid(stimulusId, "update-graph"),
    },
  };
}

/** `client-releases-keys` from `clientId`. */
export function releaseKeys(
  clientId: string,
  keys: readonly string[],
  stimulusId?: string,
): SchedulerEvent {
  return {
    kind: "client-message",
    msg: {
      op: "client-releases-keys",
      keys,
      clientId,
      stimulusId: sid(stimulusId, "client-releases-keys"),
    },
  };
}

/** `cancel-keys` from `clientId`. */
export function cancelKeys(
  clientId: string,
  keys: readonly string[],
  force = false,
  stimulusId?: string,
): SchedulerEvent {
  return {
    kind: "client-message",
    msg: { op: "cancel-keys", keys, clientId, force, stimulusId: sid(stimulusId, "cancel") },
  };
}

/** `update-data` from `clientId`: `key → workers`, each value `nbytes` (100) bytes of type "int". */
export function updateData(
  clientId: string,
  keys: Record<string, readonly string[]>,
  stimulusId?: string,
  nbytes = 100,
): SchedulerEvent {
  return {
    kind: "client-message",
    msg: {
      op: "update-data",
      keys: Object.entries(keys).map(([key, workers]) => ({
        key,
        workers,
        nbytes,
        typename: "int",
      })),
      clientId,
      stimulusId: sid(stimulusId, "update-data"),
    },
  };
}

/** `replicate` from `clientId`. */
export function replicate(
  clientId: string,
  keys: readonly string[],
  options: { n?: number; workers?: readonly string[] } = {},
  stimulusId?: string,
): SchedulerEvent {
  return {
    kind: "client-message",
    msg: { op: "replicate", keys, ...options, clientId, stimulusId: sid(stimulusId, "replicate") },
  };
}

/** `task-finished` from `worker`. */
export function taskFinished(
  worker: string,
  key: string,
  runId: number,
  nbytes: number | null = 100,
  stimulusId?: string,
): SchedulerEvent {
  return {
    kind: "worker-message",
    worker,
    msg: {
      op: "task-finished",
      key,
      runId,
      nbytes,
      typename: "number",
      stimulusId: sid(stimulusId, "task-finished"),
    },
  };
}

/** `task-erred` from `worker`; `fetchFailed` as a worker marks one for a key it could not fetch. */
export function taskErred(
  worker: string,
  key: string,
  runId: number,
  exceptionText = "Error: boom",
  stimulusId?: string,
  fetchFailed?: true,
): SchedulerEvent {
  return {
    kind: "worker-message",
    worker,
    msg: {
      op: "task-erred",
      key,
      runId,
      exception: { message: exceptionText },
      exceptionText,
      tracebackText: "at f()",
      ...(fetchFailed === true ? { fetchFailed } : {}),
      stimulusId: sid(stimulusId, "task-erred"),
    },
  };
}

/** `task-erred` from `worker` for a key it failed to fetch from a peer (`fetchFailed`). */
export function fetchErred(
  worker: string,
  key: string,
  runId: number,
  exceptionText = "Error: boom",
): SchedulerEvent {
  return taskErred(worker, key, runId, exceptionText, "gather-dep-failure", true);
}

/** `steal-response` from `worker`. */
export function stealResponse(
  worker: string,
  key: string,
  state: TaskStateState | null,
  stimulusId?: string,
): SchedulerEvent {
  return {
    kind: "worker-message",
    worker,
    msg: { op: "steal-response", key, state, stimulusId: sid(stimulusId, "steal-response") },
  };
}

/** A `steal-request` stimulus. */
export function stealRequest(
  key: string,
  victim: string,
  thief?: string,
  stimulusId?: string,
): SchedulerEvent {
  return { kind: "steal-request", key, victim, thief, stimulusId: sid(stimulusId, "steal") };
}

/** Any other worker message, with a made-up stimulus id. */
export function fromWorker(
  worker: string,
  msg: Record<string, unknown> & { op: string },
  stimulusId?: string,
): SchedulerEvent {
  return {
    kind: "worker-message",
    worker,
    msg: { ...msg, stimulusId: sid(stimulusId, msg.op) },
  } as SchedulerEvent;
}

/** Any other client message, with a made-up stimulus id. */
export function fromClient(
  msg: Record<string, unknown> & { op: string; clientId: string },
  stimulusId?: string,
): SchedulerEvent {
  return {
    kind: "client-message",
    msg: { ...msg, stimulusId: sid(stimulusId, msg.op) },
  } as SchedulerEvent;
}

/** `[recipient, op, key-or-keys]` of each message: a compact form to assert on. */
export function summarize(out: readonly SchedulerMessage[]): string[] {
  return out.map(({ to, msg }) => {
    const who = to.kind === "worker" ? to.address : `client:${to.id}`;
    const m = msg as { key?: string; keys?: readonly string[]; worker?: string };
    const what = m.key ?? (m.keys ? m.keys.join(",") : (m.worker ?? ""));
    return `${who} ${msg.op} ${what}`.trimEnd();
  });
}

/** The `compute-task` messages, with the worker each goes to. */
export function computeTasks(
  out: readonly SchedulerMessage[],
): { worker: string; msg: ComputeTaskMsg }[] {
  const found: { worker: string; msg: ComputeTaskMsg }[] = [];
  for (const { to, msg } of out) {
    if (to.kind === "worker" && msg.op === "compute-task") found.push({ worker: to.address, msg });
  }
  return found;
}

/**
 * A validating scheduler state with three workers and data scattered by
 * client `c`: `x` on w1 alone and `y` on w1 and w2 (100 bytes each), `big` on
 * w2 (500 bytes: w2 holds the most, w3 nothing).
 */
export function threeWorkersWithData(extras: RegistrationExtras = {}): SchedulerState {
  const s = new SchedulerState({ validate: true });
  const reg = (address: string) => registerWorker(address, 1, {}, undefined, extras);
  s.handleStimulus(reg("w1"), reg("w2"), reg("w3"));
  s.handleStimulus(updateData("c", { x: ["w1"], y: ["w1", "w2"] }));
  s.handleStimulus({
    kind: "client-message",
    msg: {
      op: "update-data",
      keys: [{ key: "big", workers: ["w2"], nbytes: 500, typename: "Buffer" }],
      clientId: "c",
      stimulusId: "big",
    },
  });
  return s;
}
