/**
 * Property test of the scheduler's data movements: scattered keys of random
 * sizes on random workers, tasks that need them running there, and random
 * `replicate` (with `n` from 1, so that copies are trimmed) and `rebalance`
 * requests, and retirements of workers, while copies arrive late or fail,
 * tasks finish, keys are released and workers leave, all with validation on.
 *
 * Fake workers hold what the scheduler's messages put on them and fail the
 * test on what the seed's worker would refuse: a `remove-replicas` of an
 * input of a task running there. After every stimulus the scheduler's
 * holders of each key must be workers that hold it, no drop may take a key's
 * last copy, and at the end every request is answered, with a rebalance's
 * count of moves equal to the drops it sent.
 *
 * `WEFT_PROPERTY_RUNS=n` sets the number of runs (default 1,000);
 * `WEFT_PROPERTY_SEED=s` replays the runs of a reported seed (default a fixed
 * one), and `WEFT_PROPERTY_SEED=random` draws one.
 */

import fc from "fast-check";
import { expect, test } from "vitest";
import type { SchedulerMessage } from "../../protocol/messages.ts";
import type { SchedulerEvent } from "./events.ts";
import { SchedulerState } from "./schedulerState.ts";
import * as t from "./testing.ts";

type Action =
  | { kind: "replicate"; keys: number[]; n: number; limit: number[] | null }
  | { kind: "rebalance"; keys: number[] | null; limit: number[] | null }
  | { kind: "deliver"; pick: number }
  | { kind: "fail"; pick: number }
  | { kind: "finish"; pick: number }
  | { kind: "release"; pick: number }
  | { kind: "remove"; pick: number }
  | { kind: "retire"; pick: number };

const picks = fc.array(fc.nat(), { minLength: 1, maxLength: 4 });

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("replicate" as const),
      keys: picks,
      n: fc.integer({ min: 1, max: 4 }),
      limit: fc.option(picks, { nil: null }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("rebalance" as const),
      keys: fc.option(picks, { nil: null }),
      limit: fc.option(picks, { nil: null }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("deliver" as const), pick: fc.nat() }) },
  fc.record({ kind: fc.constant("fail" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("finish" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("release" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("retire" as const), pick: fc.nat() }),
);

/** The start: each scattered key's size and holders, and tasks needing keys pinned to workers. */
const setup = fc.record({
  workers: fc.integer({ min: 2, max: 5 }),
  keys: fc.array(fc.record({ nbytes: fc.integer({ min: 1, max: 1000 }), holders: picks }), {
    minLength: 1,
    maxLength: 12,
  }),
  tasks: fc.array(fc.record({ dep: fc.nat(), worker: fc.nat() }), { maxLength: 4 }),
});

type Start = typeof setup extends fc.Arbitrary<infer T> ? T : never;

function pickOf<T>(items: readonly T[], i: number): T | undefined {
  return items.length === 0 ? undefined : items[i % items.length];
}

class Harness {
  readonly s = new SchedulerState({ validate: true });
  /** What each live worker holds, and the inputs of the tasks assigned to it. */
  readonly holds = new Map<string, Set<string>>();
  readonly assigned = new Map<string, Map<string, { runId: number; deps: readonly string[] }>>();
  /** Copies asked for and not delivered or failed yet. */
  readonly fetches: { worker: string; key: string }[] = [];
  /** Requests not answered yet, by stimulus id; for a rebalance, the drops it sent. */
  readonly open = new Map<string, { rebalance: boolean; drops: number }>();
  private requests = 0;

  constructor(workers: number) {
    for (let i = 0; i < workers; i++) {
      const address = `w${i}`;
      this.holds.set(address, new Set());
      this.assigned.set(address, new Map());
      this.send(t.registerWorker(address, 2));
    }
  }

  get addresses(): string[] {
    return [...this.holds.keys()];
  }

  send(ev: SchedulerEvent): void {
    this.apply(this.s.handleStimulus(ev));
    this.check();
  }

  private apply(out: readonly SchedulerMessage[]): void {
    for (const { to, msg } of out) {
      if (to.kind === "client") {
        if (msg.op === "replicated" || msg.op === "rebalanced" || msg.op === "workers-retired") {
          const r = this.open.get(msg.stimulusId);
          expect(r, `an answer to nothing: ${msg.stimulusId}`).toBeDefined();
          if (msg.op === "rebalanced") expect(msg.moved).toBe(r?.drops);
          this.open.delete(msg.stimulusId);
        }
        continue;
      }
      const holds = this.holds.get(to.address);
      const assigned = this.assigned.get(to.address);
      if (holds === undefined || assigned === undefined) continue; // a removed worker
      switch (msg.op) {
        case "compute-task":
          assigned.set(msg.key, { runId: msg.runId, deps: [...msg.whoHas.keys()] });
          break;
        case "acquire-replicas":
          for (const key of msg.whoHas.keys()) this.fetches.push({ worker: to.address, key });
          break;
        case "remove-replicas":
          for (const key of msg.keys) {
            for (const [task, a] of assigned) {
              expect(
                a.deps,
                `remove-replicas of ${key}, an input of ${task} on ${to.address}`,
              ).not.toContain(key);
            }
            expect(
              this.s.tasks.get(key)?.whoHas.size ?? 1,
              `remove-replicas of the last copy of ${key}`,
            ).toBeGreaterThan(0);
            holds.delete(key);
            const r = this.open.get(msg.stimulusId);
            if (r?.rebalance === true) r.drops++;
          }
          break;
        case "free-keys":
          for (const key of msg.keys) {
            holds.delete(key);
            assigned.delete(key);
          }
          break;
        case "close-worker":
          // Retired: the scheduler removed it; nothing it held may be lost with it.
          expect(this.s.workers.has(to.address), `${to.address} closed but listed`).toBe(false);
          for (const key of holds) {
            const ts = this.s.tasks.get(key);
            if (ts === undefined) continue;
            expect(
              ts.state === "memory" ||
                !["waiting", "processing", "no-worker", "queued"].includes(ts.state),
              `${key}, held by retired ${to.address}, is ${ts.state}`,
            ).toBe(true);
          }
          this.holds.delete(to.address);
          this.assigned.delete(to.address);
          break;
        default:
          break;
      }
    }
  }

  /** The scheduler lists as holders only workers that hold the key. */
  private check(): void {
    for (const ts of this.s.tasks.values()) {
      for (const ws of ts.whoHas) {
        expect(this.holds.get(ws.address)?.has(ts.key), `${ws.address} listed for ${ts.key}`).toBe(
          true,
        );
      }
    }
  }

  scatter(key: string, workers: string[], nbytes: number): void {
    for (const w of workers) this.holds.get(w)?.add(key);
    this.send({
      kind: "client-message",
      msg: {
        op: "update-data",
        keys: [{ key, workers, nbytes, typename: "Buffer" }],
        clientId: "c",
        stimulusId: `scatter-${key}`,
      },
    });
  }

  private workersOf(limit: number[] | null): string[] | undefined {
    if (limit === null) return undefined;
    const all = this.addresses;
    return [...new Set(limit.map((i) => `w${i % Math.max(1, all.length + 1)}`))];
  }

  private keysOf(picked: number[]): string[] {
    const inMemory = [...this.s.tasks.values()].filter((ts) => ts.state === "memory");
    return [...new Set(picked.map((i) => pickOf(inMemory, i)?.key ?? "gone"))];
  }

  act(a: Action): void {
    switch (a.kind) {
      case "replicate":
      case "rebalance": {
        const stimulusId = `${a.kind}-${++this.requests}`;
        this.open.set(stimulusId, { rebalance: a.kind === "rebalance", drops: 0 });
        const workers = this.workersOf(a.limit);
        const fields =
          a.kind === "replicate"
            ? { keys: this.keysOf(a.keys), n: a.n }
            : a.keys === null
              ? {}
              : { keys: this.keysOf(a.keys) };
        this.send(
          t.fromClient(
            { op: a.kind, ...fields, ...(workers ? { workers } : {}), clientId: "c" },
            stimulusId,
          ),
        );
        return;
      }
      case "deliver":
      case "fail": {
        const f = this.fetches[a.pick % Math.max(1, this.fetches.length)];
        if (f === undefined) return;
        this.fetches.splice(this.fetches.indexOf(f), 1);
        const holds = this.holds.get(f.worker);
        if (holds === undefined) return;
        const held = [...this.holds.entries()].some(([w, h]) => w !== f.worker && h.has(f.key));
        if (a.kind === "deliver" && held) {
          holds.add(f.key);
          this.send(t.fromWorker(f.worker, { op: "add-keys", keys: [f.key] }));
        } else {
          this.send(t.fetchErred(f.worker, f.key, -1, "OSError: no holder answered"));
        }
        return;
      }
      case "finish": {
        const running: { worker: string; key: string; runId: number }[] = [];
        for (const [worker, tasks] of this.assigned) {
          for (const [key, x] of tasks) running.push({ worker, key, runId: x.runId });
        }
        const r = pickOf(running, a.pick);
        if (r === undefined) return;
        this.assigned.get(r.worker)?.delete(r.key);
        this.holds.get(r.worker)?.add(r.key);
        this.send(t.taskFinished(r.worker, r.key, r.runId, 10));
        return;
      }
      case "release": {
        const key = pickOf([...this.s.tasks.keys()], a.pick);
        if (key !== undefined) this.send(t.releaseKeys("c", [key]));
        return;
      }
      case "retire": {
        const w = pickOf(this.addresses, a.pick);
        if (w === undefined) return;
        const stimulusId = `retire-${++this.requests}`;
        this.open.set(stimulusId, { rebalance: false, drops: 0 });
        this.send(t.fromClient({ op: "retire-workers", workers: [w], clientId: "c" }, stimulusId));
        return;
      }
      case "remove": {
        if (this.holds.size <= 1) return;
        const w = pickOf(this.addresses, a.pick);
        if (w === undefined) return;
        this.holds.delete(w);
        this.assigned.delete(w);
        this.send(t.removeWorker(w));
        return;
      }
    }
  }

  /** Deliver every copy still asked for, so that every request is answered. */
  drain(): void {
    for (let round = 0; round < 1000 && this.fetches.length > 0; round++)
      this.act({ kind: "deliver", pick: 0 });
    expect(this.fetches).toEqual([]);
    expect([...this.open.keys()], "requests never answered").toEqual([]);
    this.s.validateState();
  }
}

/** Scatter the start's keys, submit its tasks, act, then drain: the harness fails on what is wrong. */
function run(start: Start, actions: readonly Action[]): void {
  const h = new Harness(start.workers);
  const all = h.addresses;
  start.keys.forEach((k, i) => {
    const workers = [...new Set(k.holders.map((j) => all[j % all.length]))];
    h.scatter(`k${i}`, workers, k.nbytes);
  });
  const graph: Record<string, ReturnType<typeof t.task>> = {};
  start.tasks.forEach((x, i) => {
    const dep = `k${x.dep % start.keys.length}`;
    graph[`z${i}`] = t.task([dep], { workers: [all[x.worker % all.length]] });
  });
  if (start.tasks.length > 0) h.send(t.updateGraph("c", graph, Object.keys(graph)));
  for (const a of actions) h.act(a);
  h.drain();
}

test("copies, trims and moves keep every key held, never drop an input of a running task, and answer", () => {
  fc.assert(fc.property(setup, fc.array(action, { minLength: 10, maxLength: 60 }), run), {
    numRuns: Number(process.env.WEFT_PROPERTY_RUNS ?? 1000),
    // Fixed by default so `npm test` is deterministic, as the other property tests;
    // WEFT_PROPERTY_SEED=random explores (fast-check prints the seed of a failure).
    ...(process.env.WEFT_PROPERTY_SEED === "random"
      ? {}
      : { seed: Number(process.env.WEFT_PROPERTY_SEED ?? 20261205) }),
  });
});

test("a retirement whose copy arrived, was trimmed by a replicate, then lost elsewhere, asks again", () => {
  // Found by the property (seed -1354467641, once in ~30,000 runs), shrunk. w0,
  // retiring, holds k0 and z0. k0's copy arrives on w3 (w1 has one too, from a
  // replicate); z0's fails and is asked of w1; a replicate of n=1 trims k0 off w3;
  // then w1 leaves: k0 is on w0 alone again. The retirement went on waiting for
  // the copy it had seen arrive on w3, and never answered.
  run(
    {
      workers: 5,
      keys: [
        { nbytes: 1, holders: [0] },
        { nbytes: 1, holders: [1, 0] },
        { nbytes: 1, holders: [2] },
      ],
      tasks: [{ dep: 0, worker: 0 }],
    },
    [
      { kind: "replicate", keys: [0], n: 1, limit: [1] },
      { kind: "finish", pick: 0 },
      { kind: "retire", pick: 0 },
      { kind: "deliver", pick: 0 },
      { kind: "deliver", pick: 0 },
      { kind: "release", pick: 1 },
      { kind: "fail", pick: 0 },
      { kind: "replicate", keys: [0], n: 1, limit: null },
      { kind: "remove", pick: 1 },
    ],
  );
});
