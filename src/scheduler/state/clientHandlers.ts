/**
 * The handlers of client→scheduler messages (Dask's `client_handlers`:
 * `update_graph`, `client_releases_keys`, `client_desires_keys`,
 * `stimulus_cancel`, `remove_client`, the `fire-and-forget` client, the
 * datasets of Dask's `PublishExtension`, and the `update_data`, `replicate`,
 * `rebalance`, `retire_workers` and `restart` rpcs).
 */

import type { CancelKeysMsg, ClientToSchedulerMessage } from "../../protocol/messagesClient.ts";
import type { ClientInfo } from "./clientInfo.ts";
import { getDataset, publishDataset, unpublishDataset } from "./datasets.ts";
import { unreachable } from "./events.ts";
import { fireAndForget } from "./fireAndForget.ts";
import { notifyHeldUpWanted } from "./notify.ts";
import { rebalance } from "./rebalance.ts";
import { replicate, replicatorClientLeft } from "./replicate.ts";
import { restart, restartWorkers } from "./restart.ts";
import { retireWorkers } from "./retire.ts";
import type { SchedulerState } from "./schedulerState.ts";
import { itemsOf, sharedAdd, sharedRemove } from "./sets.ts";
import type { TaskState } from "./taskState.ts";
import { updateData } from "./updateData.ts";
import { updateGraph } from "./updateGraph.ts";

/** Dispatch one client message. */
export function handleClientMessage(s: SchedulerState, msg: ClientToSchedulerMessage): void {
  switch (msg.op) {
    case "update-graph":
      updateGraph(s, msg);
      return;
    case "client-releases-keys": {
      const cs = s.clients.get(msg.clientId);
      if (cs !== undefined) clientReleasesKeys(s, cs, msg.keys);
      return;
    }
    case "client-desires-keys": {
      const cs = s.ensureClient(msg.clientId);
      if (msg.submission !== undefined) cs.lastSubmission = msg.submission;
      clientDesiresKeys(s, cs, msg.keys);
      return;
    }
    case "cancel-keys":
      cancelKeys(s, msg);
      return;
    case "fire-and-forget":
      fireAndForget(s, msg);
      return;
    case "publish-dataset":
      publishDataset(s, msg);
      return;
    case "get-dataset":
      getDataset(s, msg);
      return;
    case "unpublish-dataset":
      unpublishDataset(s, msg);
      return;
    case "update-data":
      updateData(s, msg);
      return;
    case "replicate":
      replicate(s, msg);
      return;
    case "rebalance":
      rebalance(s, msg);
      return;
    case "retire-workers":
      retireWorkers(s, msg);
      return;
    case "restart":
      // As Dask's Scheduler.restart tells its plugins first.
      s.onRestart();
      restart(s, msg);
      return;
    case "restart-workers":
      restartWorkers(s, msg);
      return;
    case "retry":
      retry(s, msg.keys);
      return;
    case "close-client": {
      const cs = s.clients.get(msg.clientId);
      if (cs === undefined) return;
      clientReleasesKeys(
        s,
        cs,
        [...cs.wantsWhat].map((ts) => ts.key),
      );
      replicatorClientLeft(s, cs);
      s.clients.delete(cs.id);
      return;
    }
    default:
      unreachable(msg, "client message");
  }
}

/**
 * `retry` (Dask's `stimulus_retry`): compute erred keys again. From each erred
 * key the walk goes down its erred dependencies to the tasks that failed
 * themselves (no erred dependency), which are sent back to waiting; going
 * through released, each tells its clients `task-retried` and sends its erred
 * dependents back to waiting, and so the keys asked for follow. Keys unknown
 * or not erred are left alone (Dask would send a key in memory back to
 * waiting).
 */
function retry(s: SchedulerState, keys: readonly string[]): void {
  const stack: TaskState[] = [];
  for (const key of keys) {
    const ts = s.tasks.get(key);
    if (ts?.state === "erred") stack.push(ts);
  }
  const seen = new Set<TaskState>();
  while (stack.length > 0) {
    const ts = stack.pop() as TaskState;
    if (seen.has(ts)) continue;
    seen.add(ts);
    let erredInput = false;
    for (const dts of itemsOf(ts.dependencies)) {
      if (dts.state === "erred") {
        erredInput = true;
        stack.push(dts);
      }
    }
    if (!erredInput) s.recommend(ts, "waiting");
  }
}

/** Tell `cs` the outcome of `ts` if it has one (Dask's `report_on_key`). */
export function reportOnKey(s: SchedulerState, cs: ClientInfo, ts: TaskState): void {
  if (ts.state === "memory") {
    s.sendToClient(cs, {
      op: "key-in-memory",
      key: ts.key,
      typename: ts.typename,
      stimulusId: s.stimulusId,
    });
  } else if (ts.state === "erred") {
    const failing = ts.exceptionBlame ?? ts;
    s.sendToClient(cs, {
      op: "task-erred",
      key: ts.key,
      blame: failing.key,
      exception: failing.exception,
      traceback: failing.traceback,
      exceptionText: failing.exceptionText,
      tracebackText: failing.tracebackText,
      stimulusId: s.stimulusId,
    });
  }
}

/**
 * `cs` wants these known keys. A key already in memory or erred is reported at
 * once; a released one is computed again; one held up by a task already in
 * `no-worker` is reported as such. Unknown keys are answered with
 * `cancelled-keys`.
 */
export function clientDesiresKeys(
  s: SchedulerState,
  cs: ClientInfo,
  keys: readonly string[],
): void {
  let unknown: string[] | null = null;
  for (const key of keys) {
    const ts = s.tasks.get(key);
    if (ts === undefined) {
      (unknown ??= []).push(key);
      continue;
    }
    addWant(s, cs, ts);
    if (ts.state === "memory" || ts.state === "erred") reportOnKey(s, cs, ts);
  }
  if (unknown !== null) {
    s.sendToClient(cs, {
      op: "cancelled-keys",
      keys: unknown,
      reason: "unknown keys",
      stimulusId: s.stimulusId,
      submission: cs.lastSubmission,
    });
  }
  notifyHeldUpWanted(s, cs, keys);
}

/**
 * `cs` (a client, or a stand-in) wants `ts`: a released task that can be
 * computed again goes back to waiting.
 */
export function addWant(s: SchedulerState, cs: ClientInfo, ts: TaskState): void {
  ts.whoWants = sharedAdd(ts.whoWants, cs);
  cs.wantsWhat.add(ts);
  if (ts.state === "released" && ts.runSpec !== null) s.recommend(ts, "waiting");
}

/**
 * `cs` no longer wants these keys (Dask's `_client_releases_keys`): a key
 * nobody wants is forgotten if nothing depends on it, else released once no
 * task in play needs it.
 */
export function clientReleasesKeys(
  s: SchedulerState,
  cs: ClientInfo,
  keys: readonly string[],
): void {
  for (const key of keys) {
    const ts = s.tasks.get(key);
    if (ts === undefined || !cs.wantsWhat.delete(ts)) continue;
    ts.whoWants = sharedRemove(ts.whoWants, cs);
    if (ts.whoWants.size === 0) {
      if (ts.dependents.size === 0) s.recommend(ts, "forgotten");
      else if (ts.state !== "erred" && ts.waiters.size === 0) s.recommend(ts, "released");
    }
  }
}

/**
 * `cancel-keys` (Dask's `stimulus_cancel`): a key wanted by this client alone
 * (or any key, with `force`) is cancelled together with the tasks depending on
 * it that it alone wants; the clients wanting them lose them and are told of
 * those with `cancelled-keys` (Dask tells every client). A key other clients
 * want too is cancelled for this client only: it stops wanting it. The
 * requesting client is always answered (with the stimulus id of its request),
 * even when nothing was cancelled or it never submitted anything, so that it
 * can wait for the answer.
 */
function cancelKeys(s: SchedulerState, msg: CancelKeysMsg): void {
  const cs = s.ensureClient(msg.clientId);
  const force = msg.force === true;
  const cancelled: TaskState[] = [];
  const seen = new Set<TaskState>();
  const stack: TaskState[] = [];
  for (const key of msg.keys) {
    const ts = s.tasks.get(key);
    if (ts !== undefined) stack.push(ts);
  }
  const shared: TaskState[] = [];
  while (stack.length > 0) {
    const ts = stack.pop() as TaskState;
    if (seen.has(ts)) continue;
    seen.add(ts);
    if (force || (ts.whoWants.size === 1 && ts.whoWants.has(cs))) {
      cancelled.push(ts);
      for (const dts of itemsOf(ts.dependents)) stack.push(dts);
    } else if (cs.wantsWhat.has(ts)) {
      shared.push(ts);
    }
  }
  const keys = cancelled.map((ts) => ts.key);
  const sharedKeys = shared.map((ts) => ts.key);
  // With force, the other clients lose the cancelled keys they wanted, and are told
  // of those only: another client's record of a key it never wanted here may be a
  // submission of its own, on its way, that this cancel does not concern.
  const others = new Map<ClientInfo, string[]>();
  if (force) {
    for (const ts of cancelled) {
      for (const other of ts.whoWants) {
        if (other === cs) continue;
        const theirs = others.get(other);
        if (theirs === undefined) others.set(other, [ts.key]);
        else theirs.push(ts.key);
      }
    }
  }
  clientReleasesKeys(s, cs, keys);
  for (const [other, theirs] of others) clientReleasesKeys(s, other, theirs);
  clientReleasesKeys(s, cs, sharedKeys);
  s.processRecommendations(); // as Dask: the releases happen before the report
  const reason = msg.reason ?? `cancelled by client ${cs.id}`;
  const mine = sharedKeys.length === 0 ? keys : [...keys, ...sharedKeys];
  const stimulusId = s.stimulusId;
  const submission = cs.lastSubmission;
  s.sendToClient(cs, { op: "cancelled-keys", keys: mine, reason, stimulusId, submission });
  for (const [other, theirs] of others) {
    // `other` may have asked for some of these keys again, in a request still on its way.
    s.sendToClient(other, {
      op: "cancelled-keys",
      keys: theirs,
      reason,
      stimulusId,
      submission: other.lastSubmission,
    });
  }
}
