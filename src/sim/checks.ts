/**
 * What a finished run must satisfy, checked once the cluster is quiet:
 * every wanted key is in memory with the right value on every worker the
 * scheduler says holds it, or erred with an error the simulation injected
 * (or `KilledWorker`, after enough deaths), blamed on the key or one of its
 * inputs; a task whose input a worker failed to fetch with an injected error
 * (not on the network) errs with that error, naming the input; or (the
 * `scatter` workload) cancelled because it is, or needs, scattered data that
 * the run lost (see {@link scatterCancellation}); and, after the client
 * released everything, no machine holds anything.
 */

import { ACTOR_LOST, SCATTERED_DATA_LOST } from "../scheduler/state/transitions.ts";
import { plural } from "../util/plural.ts";
import { SimFailure } from "./failure.ts";
import type { ScatterLedger } from "./scatterLedger.ts";
import { type ClientError, type SimClient, WITHHELD } from "./simClient.ts";
import type { SimScheduler } from "./simScheduler.ts";
import type { SimWorker } from "./simWorker.ts";
import type { ActorCount, ScatterCount } from "./stats.ts";
import { SimActorRef, SimValue } from "./values.ts";
import type { Workload } from "./workload.ts";

/** What the checks need to know about a run. */
export interface CheckInput {
  /** The run's workload. */
  readonly workload: Workload;
  /** The correct number of every task, by index in the workload. */
  readonly expected: Uint32Array;
  /** Each task's index in the workload, by key. */
  readonly index: ReadonlyMap<string, number>;
  /** The simulated scheduler, as the run left it. */
  readonly scheduler: SimScheduler;
  /** Every worker of the run (alive or dead), by address. */
  readonly workers: ReadonlyMap<string, SimWorker>;
  /** The simulated client, as the run left it. */
  readonly client: SimClient;
  /** Error texts injected per key. */
  readonly injected: ReadonlyMap<string, ReadonlySet<string>>;
  /** Error texts injected into fetches, per fetched key. */
  readonly injectedFetch: ReadonlyMap<string, ReadonlySet<string>>;
  /** The run's `allowedFailures` (worker deaths that make a running task erred). */
  readonly allowedFailures: number;
  /** The record of the scattered keys (the `scatter` workload), or null. */
  readonly scatter: ScatterLedger | null;
  /** The run's scatter counters (wanted keys cancelled for lost scattered data are counted). */
  readonly counts: Record<ScatterCount, number>;
  /** The workers each actor was held on (its task ran there), per actor key. */
  readonly actorHomes: ReadonlyMap<string, ReadonlySet<string>>;
  /** The run's actor counters (wanted keys erred for a lost actor are counted). */
  readonly actorCounts: Record<ActorCount, number>;
}

function isAncestorOrSelf(w: Workload, ancestor: number, of: number): boolean {
  if (ancestor === of) return true;
  const seen = new Set<number>();
  const stack = [of];
  while (stack.length > 0) {
    const i = stack.pop() as number;
    for (const d of w.tasks[i].deps) {
      if (d === ancestor) return true;
      if (!seen.has(d)) {
        seen.add(d);
        stack.push(d);
      }
    }
  }
  return false;
}

/**
 * True when `text` is how the scheduler fails task `i` whose input could not
 * be fetched for a reason other than the network (`inputUnfetchable`): an
 * injected fetch error of one of its inputs, naming that input.
 */
function failedFetch(x: CheckInput, i: number, text: string): boolean {
  for (const d of x.workload.tasks[i].deps) {
    const dep = x.workload.tasks[d].key;
    const suffix = ` (while fetching its input ${dep})`;
    if (!text.endsWith(suffix)) continue;
    if (x.injectedFetch.get(dep)?.has(text.slice(0, -suffix.length)) === true) return true;
  }
  return false;
}

/** The reason the scheduler gives dependents of a forgotten key (`removeKey`). */
const LOST_DEPENDENCIES = "lost dependencies: a task it needs was lost";

/** The reason `update-graph` gives wanted keys that need keys it does not know. */
const UNKNOWN_DEPENDENCIES = /^lost dependencies: (.+) unknown$/;

/**
 * Null when wanted key `i`, which the scheduler cancelled with `reason`, had
 * to be: it is, or depends on, a scattered key the run lost (dropped from the
 * scatter, rejected by the scheduler, lost with its last holder as the scatter
 * ledger checked, or given up by the client), and the reason says so
 * (`SCATTERED_DATA_LOST` for a lost scattered key itself, "lost dependencies"
 * for what needs one, "lost dependencies: K unknown" naming such a key for a
 * key submitted after its loss, or the client's own {@link WITHHELD} for a key
 * it did not submit). Else why not.
 */
function scatterCancellation(x: CheckInput, i: number, reason: string | undefined): string | null {
  const ledger = x.scatter;
  if (ledger === null) return "no scattered data in this workload";
  const key = x.workload.tasks[i].key;
  const gone = [...ledger.records.values()].filter(
    (r) => ledger.gone(r.key) && isAncestorOrSelf(x.workload, r.index, i),
  );
  if (gone.length === 0) return "it needs no scattered data the run lost";
  if (reason === LOST_DEPENDENCIES || reason === WITHHELD) return null;
  if (reason === SCATTERED_DATA_LOST) {
    return gone.some((r) => r.key === key && r.fate === "lost")
      ? null
      : `the reason is that it is lost scattered data, which ${key} is not`;
  }
  const unknown = reason === undefined ? null : UNKNOWN_DEPENDENCIES.exec(reason);
  if (unknown !== null) {
    const named = new Set(unknown[1].split(", "));
    return gone.some((r) => named.has(r.key))
      ? null
      : `the reason names none of the lost scattered keys it needs (${gone.map((r) => r.key).join(", ")})`;
  }
  return `unexpected reason for needing lost scattered data: ${reason ?? "none"}`;
}

/** How a held value shows in a failure message. */
function shown(v: unknown): string {
  if (v instanceof SimValue) return `${v.key}=${v.v}`;
  if (v instanceof SimActorRef) return `a handle to ${v.key}=${v.v} on ${v.address}`;
  return String(v);
}

/**
 * Every replica held by a live worker has its key's correct value: a value in
 * `data`, or for an actor, a handle to it (naming its key, a worker it was
 * held on, and its number) in `data`, or its object in `actors` on the worker
 * that ran it (once its task is in memory there).
 */
export function checkReplicas(x: CheckInput): void {
  for (const w of x.workers.values()) {
    if (!w.alive) continue;
    for (const key of w.state.data.keys()) {
      const v = w.state.data.get(key);
      const i = x.index.get(key);
      if (i === undefined)
        throw new SimFailure("wrong-value", `${w.address} holds unknown key ${key}`);
      const actor = x.workload.tasks[i].actor === true;
      const ok = actor
        ? v instanceof SimActorRef &&
          v.key === key &&
          v.v === x.expected[i] &&
          x.actorHomes.get(key)?.has(v.address) === true
        : v instanceof SimValue && v.key === key && v.v === x.expected[i];
      if (!ok) {
        throw new SimFailure(
          "wrong-value",
          `${w.address} holds ${key} = ${shown(v)}, expected ${actor ? "a handle to the actor, " : ""}${x.expected[i]}`,
        );
      }
    }
    for (const [key, v] of w.state.actors) {
      const i = x.index.get(key);
      if (i === undefined || x.workload.tasks[i].actor !== true) {
        throw new SimFailure(
          "wrong-value",
          `${w.address} holds ${key} as an actor, which it is not`,
        );
      }
      if (w.state.tasks.get(key)?.state !== "memory") continue;
      if (!(v instanceof SimValue) || v.key !== key || v.v !== x.expected[i]) {
        throw new SimFailure(
          "wrong-value",
          `${w.address} holds actor ${key} = ${shown(v)}, expected its object, ${x.expected[i]}`,
        );
      }
    }
  }
}

/**
 * Null when actor `key`, in memory for the client, is right where the scheduler
 * says it is: its object on exactly one worker it names (in that worker's
 * `actors`, not its `data`, with the right number), and on the other workers
 * it names, a handle in `data` naming that worker. Else why not.
 */
function actorPlacement(x: CheckInput, key: string, expected: number): string | null {
  const ts = x.scheduler.state.tasks.get(key);
  if (ts === undefined) return "the scheduler does not know it";
  const homes = [...ts.whoHas].filter((ws) => ws.actors.has(ts));
  if (homes.length !== 1) {
    return `the scheduler says it lives on ${homes.length} workers (${homes.map((ws) => ws.address).join(", ")})`;
  }
  const home = homes[0].address;
  for (const ws of ts.whoHas) {
    const w = x.workers.get(ws.address);
    if (w === undefined || !w.alive) return `it is held by ${ws.address}, which is dead`;
    if (ws.address === home) {
      const v = w.state.actors.get(key);
      if (w.state.data.has(key)) return `${home}, where it lives, has it in data`;
      if (!(v instanceof SimValue) || v.v !== expected) {
        return `${home}, where it lives, holds ${shown(v)} in actors, expected its object, ${expected}`;
      }
    } else {
      const v = w.state.data.get(key);
      if (!(v instanceof SimActorRef) || v.address !== home || v.v !== expected) {
        return `${ws.address} holds ${shown(v)}, expected a handle to ${key}=${expected} on ${home}`;
      }
    }
  }
  return null;
}

/**
 * True when `err` is how the scheduler errs a wanted actor whose worker was
 * lost, and what needs it (`ACTOR_LOST`, blamed on the actor): the blamed
 * task is an actor, and a worker it was held on died or was removed.
 */
function lostActor(x: CheckInput, err: ClientError): boolean {
  if (err.exceptionText !== `RuntimeError: ${ACTOR_LOST}`) return false;
  const bi = x.index.get(err.blame);
  if (bi === undefined || x.workload.tasks[bi].actor !== true) return false;
  for (const address of x.actorHomes.get(err.blame) ?? []) {
    const w = x.workers.get(address);
    if (w === undefined || !w.alive || !x.scheduler.state.workers.has(address)) return true;
  }
  return false;
}

/** The outcome of every wanted key (see the module comment). */
export function checkOutcomes(x: CheckInput): void {
  const s = x.scheduler.state;
  for (const wi of x.workload.wanted) {
    const key = x.workload.tasks[wi].key;
    if (x.client.released.has(key)) continue;
    const status = x.client.status.get(key);
    const ts = s.tasks.get(key);
    if (status === "cancelled") {
      const reason = x.client.cancelReasons.get(key);
      const why = scatterCancellation(x, wi, reason);
      if (why !== null) {
        throw new SimFailure(
          "lost",
          `wanted key ${key} ended cancelled for the client (${reason ?? "no reason"}): ${why}`,
        );
      }
      x.counts.cancelledWanted++;
      continue;
    }
    if (status === "pending" || status === undefined) {
      throw new SimFailure("lost", `wanted key ${key} ended ${status ?? "unknown"} for the client`);
    }
    if (ts === undefined)
      throw new SimFailure("lost", `wanted key ${key} is unknown to the scheduler`);
    if (status === "memory") {
      if (ts.state !== "memory") {
        throw new SimFailure(
          "lost",
          `the client was told ${key} is in memory; the scheduler says ${ts.state}`,
        );
      }
      if (x.workload.tasks[wi].actor === true) {
        const why = actorPlacement(x, key, x.expected[wi]);
        if (why !== null) throw new SimFailure("lost", `actor ${key} is in memory, but ${why}`);
        continue;
      }
      for (const ws of ts.whoHas) {
        const w = x.workers.get(ws.address);
        if (w === undefined || !w.alive) {
          throw new SimFailure("lost", `${key} is held by ${ws.address}, which is dead`);
        }
        const v = w.state.data.get(key);
        if (!(v instanceof SimValue)) {
          throw new SimFailure(
            "lost",
            `the scheduler says ${ws.address} holds ${key}; it does not`,
          );
        }
        if (v.v !== x.expected[wi]) {
          throw new SimFailure(
            "wrong-value",
            `${key} on ${ws.address} = ${v.v}, expected ${x.expected[wi]}`,
          );
        }
      }
      continue;
    }
    // erred
    if (ts.state !== "erred") {
      throw new SimFailure(
        "lost",
        `the client was told ${key} erred; the scheduler says ${ts.state}`,
      );
    }
    const err = x.client.errors.get(key);
    if (err === undefined) throw new SimFailure("lost", `${key} erred without an error`);
    const bi = x.index.get(err.blame);
    if (bi === undefined || !isAncestorOrSelf(x.workload, bi, wi)) {
      throw new SimFailure(
        "lost",
        `${key} erred, blamed on ${err.blame}, which is not one of its inputs`,
      );
    }
    if (lostActor(x, err)) {
      x.actorCounts.actorsLost++;
      continue;
    }
    const injected = x.injected.get(err.blame);
    const killed =
      err.exceptionText.startsWith("KilledWorker") &&
      (x.scheduler.deathsWhileProcessing.get(err.blame) ?? 0) > x.allowedFailures;
    if (
      !killed &&
      (injected === undefined || !injected.has(err.exceptionText)) &&
      !failedFetch(x, bi, err.exceptionText)
    ) {
      throw new SimFailure(
        "lost",
        `${key} erred with an error the simulation did not inject (blame ${err.blame}): ${err.exceptionText}`,
      );
    }
  }
}

/**
 * With nothing in flight: the scheduler takes each live worker it knows for
 * paused exactly while the worker is paused, whoever paused it (a retirement,
 * the pause fault, or both, in either order).
 */
export function checkPauses(x: CheckInput): void {
  for (const w of x.workers.values()) {
    if (!w.alive || w.cutOff) continue;
    const ws = x.scheduler.state.workers.get(w.address);
    if (ws === undefined) continue;
    const status = w.paused ? "paused" : "running";
    if (ws.status !== status) {
      throw new SimFailure(
        "invalid-state",
        `${w.address} is ${status}${w.pausedForMemory ? " (for memory)" : ""}, but the scheduler takes it for ${ws.status}`,
      );
    }
  }
}

/** After the client released everything: no task on the scheduler, nothing on any live worker. */
export function checkEmpty(x: CheckInput): void {
  const s = x.scheduler.state;
  if (s.tasks.size > 0) {
    const some = [...s.tasks.values()].slice(0, 5).map((ts) => `${ts.key} (${ts.state})`);
    throw new SimFailure(
      "leak",
      `after the client released everything the scheduler still has ${plural(s.tasks.size, "task")}: ${some.join(", ")}`,
    );
  }
  for (const w of x.workers.values()) {
    if (!w.alive) continue;
    if (w.state.tasks.size > 0 || w.state.data.size > 0) {
      const some = [...w.state.tasks.values()].slice(0, 5).map((ts) => `${ts.key} (${ts.state})`);
      throw new SimFailure(
        "leak",
        `after the client released everything ${w.address} still has ${plural(w.state.tasks.size, "task")} ` +
          `and ${plural(w.state.data.size, "value")}: ${some.join(", ")}`,
      );
    }
  }
}
