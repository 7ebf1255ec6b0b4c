/**
 * Property test: well-formed but stale or bogus messages, in random states.
 * Workers report runs they were never given, old runs, keys they do not hold
 * or that are gone, steal answers to requests never made; workers leave and
 * come back; clients release, want, cancel and retry keys. Each message must
 * be handled as Dask handles it (ignored, or answered with free-keys) without
 * throwing or breaking an invariant: `validateState()` holds after every one.
 *
 * `WEFT_STALE_SEEDS=n` sets the number of seeds (default 300), and
 * `WEFT_STALE_FROM=s` the first one.
 */

import { test } from "vitest";
import { InvalidStimulus } from "./errors.ts";
import type { SchedulerEvent } from "./events.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

/** A small deterministic generator (xorshift32): the seed is all a failure needs. */
function generator(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

const STATES = [
  "ready",
  "executing",
  null,
  "released",
  "memory",
  "waiting",
  "constrained",
] as const;

/** One run: a random graph on two or three workers, then `steps` random messages. */
function run(seed: number, steps: number): void {
  const r = generator(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(r() * items.length)];
  const s = new SchedulerState({
    validate: true,
    allowedFailures: Math.floor(r() * 3),
    workerSaturation: pick([1, 1.1, Number.POSITIVE_INFINITY]),
  });
  const workers = ["w1", "w2", "w3"];
  const live = new Set<string>();
  const register = (w: string): SchedulerEvent => {
    live.add(w);
    return t.registerWorker(w, 1 + Math.floor(r() * 2), r() < 0.5 ? { R: 1 } : {});
  };
  s.handleStimulus(register("w1"), register("w2"));
  const tasks: Record<string, ReturnType<typeof t.task>> = {};
  const keys: string[] = [];
  const n = 3 + Math.floor(r() * 10);
  for (let i = 0; i < n; i++) {
    const deps = keys.filter(() => r() < 0.3).slice(0, 3);
    const pinned = r() < 0.1;
    const options: Parameters<typeof t.task>[1] = {
      ...(r() < 0.2 ? { retries: 1 } : {}),
      ...(r() < 0.15 ? { resources: { R: 1 } } : {}),
      ...(r() < 0.1 ? { actor: true } : {}),
      ...(pinned ? { workers: [pick(workers)], allowOtherWorkers: r() < 0.5 } : {}),
    };
    tasks[`k${i}`] = t.task(deps, options);
    keys.push(`k${i}`);
  }
  const wanted = keys.filter(() => r() < 0.4);
  if (wanted.length === 0) wanted.push(keys[keys.length - 1]);
  s.handleStimulus(t.updateGraph("c1", tasks, wanted));
  /** Every (worker, key, run) assigned so far: the source of stale reports. */
  const runs: { w: string; key: string; runId: number }[] = [];
  for (let step = 0; step < steps; step++) {
    for (const ts of s.tasks.values()) {
      if (ts.processingOn !== null)
        runs.push({ w: ts.processingOn.address, key: ts.key, runId: ts.runId });
    }
    const old = runs.length > 0 ? pick(runs) : { w: "w1", key: "k0", runId: 1 };
    const key0 = r() < 0.9 ? pick(keys) : "unknown";
    const ts = s.tasks.get(key0);
    const at = ts?.processingOn?.address;
    const worker = r() < 0.6 && at !== undefined ? at : pick(workers);
    const runId = pick([ts?.runId ?? -1, old.runId, -1, Math.floor(r() * 30)]);
    const key = r() < 0.5 ? key0 : old.key;
    const from = r() < 0.5 ? worker : old.w;
    let ev: SchedulerEvent;
    switch (Math.floor(r() * 17)) {
      case 0:
      case 1:
      case 2:
        ev = t.taskFinished(from, key, runId, Math.floor(r() * 500));
        break;
      case 3:
        ev = t.taskErred(from, key, runId);
        break;
      case 4:
        ev = t.fetchErred(from, key, runId);
        break;
      case 5:
        ev = t.fromWorker(from, { op: "add-keys", keys: [key] });
        break;
      case 6:
        ev = t.fromWorker(from, { op: "release-worker-data", key });
        break;
      case 7:
        ev = t.fromWorker(from, { op: "reschedule", key });
        break;
      case 8:
        ev = t.fromWorker(from, {
          op: "long-running",
          key,
          computeDuration: 0.1,
          ...(r() < 0.5 ? { runId } : {}),
        });
        break;
      case 9:
        ev = t.stealRequest(key, from, r() < 0.5 ? pick(workers) : undefined, `st-${step % 3}`);
        break;
      case 10:
        ev = t.stealResponse(from, key, pick(STATES), `st-${Math.floor(r() * 3)}`);
        break;
      case 11:
        if (live.has(from)) {
          live.delete(from);
          ev = t.removeWorker(from, r() < 0.3);
        } else {
          ev = register(from);
        }
        break;
      case 12:
        ev = t.fromWorker(from, {
          op: "worker-status-change",
          status: r() < 0.5 ? "paused" : "running",
        });
        break;
      case 13:
        ev = t.releaseKeys("c1", [key]);
        break;
      case 14:
        ev = t.fromClient({ op: "client-desires-keys", keys: [key], clientId: pick(["c1", "c2"]) });
        break;
      case 15:
        ev = t.fromClient({ op: "retry", keys: [key], clientId: "c1" });
        break;
      default:
        ev = t.cancelKeys(pick(["c1", "c2"]), [key], r() < 0.3);
    }
    try {
      s.handleStimulus(ev);
      s.validateState();
    } catch (e) {
      // Malformed for this state (a second registration): refused unchanged, as it must be.
      if (e instanceof InvalidStimulus) continue;
      const what = JSON.stringify(ev, (_k, v: unknown) => (v instanceof Map ? [...v] : v));
      throw new Error(`seed ${seed}, step ${step}, ${what}`, { cause: e });
    }
  }
}

test("stale and bogus messages in random states are handled without breaking the machine", () => {
  const from = Number(process.env.WEFT_STALE_FROM ?? 1);
  const seeds = Number(process.env.WEFT_STALE_SEEDS ?? 300);
  for (let seed = from; seed < from + seeds; seed++) run(seed, 150);
});
