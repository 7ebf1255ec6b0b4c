import { createHash } from "node:crypto";
import { describe, expect, test } from "vitest";
import type { SchedulerMessage } from "../protocol/messages.ts";
import type { CancelledKeysMsg, DataUpdatedMsg } from "../protocol/messagesClient.ts";
import type { SchedulerEvent } from "../scheduler/state/events.ts";
import type { SchedulerState } from "../scheduler/state/schedulerState.ts";
import type { TaskState } from "../scheduler/state/taskState.ts";
import { SCATTERED_DATA_LOST } from "../scheduler/state/transitions.ts";
import { checkOutcomes } from "./checks.ts";
import { NO_FAULTS } from "./faults.ts";
import type { SimHooks } from "./hooks.ts";
import { resolveSimOptions, type SimOptions } from "./options.ts";
import { replayFields } from "./replayFields.ts";
import { SimRng } from "./rng.ts";
import { SCATTERED_ROOTS } from "./scatter.ts";
import { WITHHELD } from "./simClient.ts";
import { Simulation, simulate } from "./simulation.ts";
import { workloadFor } from "./workloadFor.ts";

/** The workload of `options` built from a generator seeded with `seed`. */
function build(options: Omit<SimOptions, "seed">, seed: number) {
  return workloadFor(resolveSimOptions({ seed: 1, ...options }), new SimRng(seed));
}

describe("the scatter workload", () => {
  test("is the random DAG of the seed with some of its roots scattered", () => {
    for (const [tasks, seed] of [
      [400, 1],
      [40, 2],
      [5, 3],
    ]) {
      const plain = build({ workload: "random", tasks }, seed);
      const w = build({ workload: "scatter", tasks }, seed);
      expect(w.name).toBe(`scatter(${tasks})`);
      expect(w.wanted).toEqual(plain.wanted);
      expect(w.tasks.length).toBe(plain.tasks.length);
      const roots = plain.tasks.filter((t) => t.deps.length === 0).length;
      let scattered = 0;
      for (const [i, t] of w.tasks.entries()) {
        if (t.scattered !== true) {
          expect(t).toEqual(plain.tasks[i]);
          continue;
        }
        scattered++;
        expect(plain.tasks[i].deps).toEqual([]);
        expect(t).toEqual({
          key: `scattered-${i}`,
          fn: "scattered",
          deps: [],
          nbytes: plain.tasks[i].nbytes,
          duration: 0,
          scattered: true,
        });
      }
      expect(scattered).toBeGreaterThanOrEqual(1);
      if (roots >= 40) {
        // The share is drawn from SCATTERED_ROOTS, then each root from it.
        expect(scattered / roots).toBeGreaterThan(SCATTERED_ROOTS[0] - 0.15);
        expect(scattered / roots).toBeLessThan(SCATTERED_ROOTS[1] + 0.15);
      }
    }
  });

  test("draws nothing from the other workloads' streams: their seeds replay as before", () => {
    // workloadFor for the other kinds is untouched, and mix never draws scatter.
    for (let seed = 1; seed <= 200; seed++) {
      expect(build({ workload: "mix" }, seed).name).not.toMatch(/^scatter/);
    }
    // End to end: these digests of the runs' counters were taken before the
    // scatter workload existed, and so before the client fired and forgot keys;
    // retaken when root-ish tasks with inputs began to be queued (Dask's
    // is_rootish), which places tasks otherwise, and when occupancy began to count
    // each task at its function's current average (Dask's), which does too. (A later change to the machines
    // that alters these runs changes them too: then recompute them, knowing old
    // seeds no longer replay.)
    const digest = (workload: "random" | "mix" | "pinned"): string => {
      const h = createHash("sha256");
      for (let seed = 1; seed <= 6; seed++) {
        const r = simulate({
          seed,
          workload,
          tasks: 20,
          workers: 3,
          fireAndForget: 0,
          restart: 0,
          restartWorker: 0,
          actors: 0,
          workStealing: false, // the runs as they were before work stealing
          activeMemoryManager: false, // and the Active Memory Manager
        });
        const s = r.stats;
        expect(Object.values(s.scatter).every((n) => n === 0)).toBe(true);
        expect(Object.values(s.replicate).every((n) => n === 0)).toBe(true);
        h.update(JSON.stringify(replayFields(r)));
      }
      return h.digest("hex").slice(0, 16);
    };
    expect(digest("random")).toBe("b16e55d6e7b16c29");
    expect(digest("mix")).toBe("5bb97fe92f079a5a");
    expect(digest("pinned")).toBe("266c0ef5f259d45d");
    expect(new Simulation({ seed: 1 }).scatter).toBeNull();
  });

  test("a quiet cluster: the scattered values feed their dependents, every wanted key is right", () => {
    for (const seed of [1, 2, 3]) {
      const sim = new Simulation({ seed, workload: "scatter", tasks: 30, faults: NO_FAULTS });
      const r = sim.run();
      expect(r.ok, r.failure?.message).toBe(true);
      const scattered = sim.workload.tasks.filter((t) => t.scattered === true).length;
      const c = r.stats.scatter;
      expect(c.values).toBe(scattered);
      expect(c.copies).toBeGreaterThanOrEqual(scattered);
      expect(c.lost + c.dropped + c.rejected + c.cancelledWanted).toBe(0);
      // Every task but the scattered ones ran once, on the scattered values as inputs.
      expect(r.stats.executions).toBe(sim.workload.tasks.length - scattered);
      for (const status of sim.client.status.values()) expect(status).toBe("memory");
      for (const rec of sim.scatter?.records.values() ?? []) expect(rec.fate).toBe("registered");
    }
  });

  test("passes under faults, with the races it is there for", () => {
    const runs = [1, 3, 9, 25].map((seed) =>
      simulate({ seed, workload: "scatter", tasks: 20, workers: 3 }),
    );
    for (const r of runs) expect(r.ok, `${r.command}: ${r.failure?.message}`).toBe(true);
    // Seed 3: update-data names a worker that died after storing its value.
    expect(runs[1].stats.scatter.departedHolder).toBeGreaterThan(0);
    // Seed 25: the client was slow, the scheduler removed the value's only holder
    // meanwhile, and rejected the key.
    expect(runs[3].stats.scatter.removedHolder).toBeGreaterThan(0);
    expect(runs[3].stats.scatter.rejected).toBeGreaterThan(0);
  });

  test("a lost scattered value: what needs it ends cancelled, and only that", () => {
    const sim = new Simulation({ seed: 9, workload: "scatter", tasks: 20, workers: 3 });
    const r = sim.run();
    expect(r.ok, r.failure?.message).toBe(true);
    const ledger = sim.scatter;
    if (ledger === null) throw new Error("no scatter ledger");
    const lost = [...ledger.records.values()].filter((rec) => rec.fate === "lost");
    expect(lost.length).toBeGreaterThan(0);
    expect(r.stats.scatter.lost).toBe(lost.length);
    for (const rec of lost) expect(rec.why).toMatch(/^its last holder tcp:\S+ was removed/);
    // The wanted keys that ended cancelled are exactly those that need a lost value.
    const w = sim.workload;
    const needsLost = new Set<string>();
    for (const t of w.tasks) {
      if (ledger.gone(t.key) || t.deps.some((d) => needsLost.has(w.tasks[d].key))) {
        needsLost.add(t.key);
      }
    }
    let cancelled = 0;
    for (const [key, status] of sim.client.status) {
      if (status !== "cancelled") continue;
      cancelled++;
      expect(needsLost.has(key), key).toBe(true);
      expect([
        SCATTERED_DATA_LOST,
        "lost dependencies: a task it needs was lost",
        WITHHELD,
      ]).toContain(sim.client.cancelReasons.get(key));
    }
    expect(cancelled).toBe(r.stats.scatter.cancelledWanted);
    expect(cancelled).toBeGreaterThan(0);
    // Some wanted keys that need no lost value completed.
    expect([...sim.client.status.values()].filter((s) => s === "memory").length).toBeGreaterThan(0);
  });

  test("the checks take a cancellation for lost scattered data only with a reason that fits it", () => {
    const sim = new Simulation({
      seed: 9,
      workload: "scatter",
      tasks: 20,
      workers: 3,
      releasePhase: false,
    });
    const r = sim.run();
    expect(r.ok, r.failure?.message).toBe(true);
    const ledger = sim.scatter;
    if (ledger === null) throw new Error("no scatter ledger");
    const x = sim.checkInput();
    const reasons = sim.client.cancelReasons;
    const cancelled = [...sim.client.status].filter(([, st]) => st === "cancelled").map(([k]) => k);
    const key = cancelled.find((k) => reasons.get(k) === SCATTERED_DATA_LOST);
    if (key === undefined) throw new Error("no key cancelled as lost scattered data");
    const rec = ledger.records.get(key);
    if (rec === undefined) throw new Error(`${key} is not scattered`);
    checkOutcomes(x);
    // Gone otherwise than lost with its holder: not what SCATTERED_DATA_LOST says.
    const fate = rec.fate;
    rec.fate = "rejected";
    expect(() => checkOutcomes(x)).toThrow(/it is lost scattered data, which .* is not/);
    rec.fate = fate;
    // "K unknown" must name a lost scattered key the cancelled one needs.
    const reason = reasons.get(key) as string;
    reasons.set(key, "lost dependencies: inc-999 unknown");
    expect(() => checkOutcomes(x)).toThrow(
      /the reason names none of the lost scattered keys it needs/,
    );
    reasons.set(key, `lost dependencies: inc-999, ${key} unknown`);
    checkOutcomes(x);
    reasons.set(key, reason);
  });

  test("a data-updated whose rejections are not those the scheduler made fails the run", () => {
    // A rejection of a key the scheduler registered.
    const forgeReject: SimHooks = {
      schedulerMessage(ctx, m): SchedulerMessage {
        if (m.to.kind !== "client" || m.msg.op !== "data-updated") return m;
        const held = [...ctx.scheduler.tasks.values()].find((ts) => ts.state === "memory");
        if (held === undefined) return m;
        const msg: DataUpdatedMsg = {
          ...m.msg,
          rejected: [{ key: held.key, reason: "forged", workersGone: true }],
        };
        return { to: m.to, msg };
      },
    };
    const r = simulate({
      seed: 1,
      workload: "scatter",
      tasks: 20,
      faults: NO_FAULTS,
      hooks: forgeReject,
    });
    expect(r.failure?.message).toMatch(
      /^the scheduler rejected scattered key \S+ \(forged\), though it registered it \(registered\)$/,
    );
    // A rejection the scheduler made, left out (seed 25 under faults rejects a key).
    const hideRejects: SimHooks = {
      schedulerMessage(_ctx, m): SchedulerMessage {
        if (m.to.kind !== "client" || m.msg.op !== "data-updated") return m;
        const msg: DataUpdatedMsg = { ...m.msg, rejected: [] };
        return { to: m.to, msg };
      },
    };
    const o = { seed: 25, workload: "scatter", tasks: 20, workers: 3 } as const;
    expect(simulate(o).stats.scatter.rejected).toBeGreaterThan(0);
    expect(simulate({ ...o, hooks: hideRejects }).failure?.message).toMatch(
      /^the scheduler's data-updated does not reject scattered key \S+, which it did not register$/,
    );
  });

  test("update-data must leave each key in memory, as data, on exactly the workers connected", () => {
    // Tamper with the scheduler right after it handled the first update-data (without
    // validation, which would catch some of it first): the ledger's check must.
    const tampered = (tamper: (ts: TaskState, s: SchedulerState) => void): SimHooks => {
      let armed = false;
      let done = false;
      return {
        schedulerStimulus(_ctx, ev) {
          armed = !done && ev.kind === "client-message" && ev.msg.op === "update-data";
          return ev;
        },
        afterScheduler(ctx) {
          if (!armed) return;
          done = true;
          const ts = [...ctx.scheduler.tasks.values()].find((t) => t.state === "memory");
          if (ts !== undefined) tamper(ts, ctx.scheduler);
        },
      };
    };
    const run = (tamper: (ts: TaskState, s: SchedulerState) => void) =>
      simulate({
        seed: 1,
        workload: "scatter",
        tasks: 20,
        faults: NO_FAULTS,
        validate: false,
        hooks: tampered(tamper),
      }).failure?.message;
    expect(run(() => {})).toBeUndefined();
    expect(
      run((ts) => {
        ts.runSpec = { fn: "inc", args: [] };
      }),
    ).toMatch(
      /^update-data put scattered key \S+ on \S+ \(connected\); the scheduler has it memory on \[/,
    );
    expect(
      run((ts) => {
        ts.whoHas = new Set();
      }),
    ).toMatch(
      /^update-data put scattered key \S+ on \S+ \(connected\); the scheduler has it memory on \[\]$/,
    );
    // Registered, though its only worker is gone by the time the ledger looks.
    expect(
      run((ts, sched) => {
        for (const ws of ts.whoHas) sched.workers.delete(ws.address);
      }),
    ).toMatch(
      /^the scheduler registered scattered key \S+ \(memory\) though none of its workers \(\S+\) is connected$/,
    );
  });

  test("a cancellation the run does not explain fails it", () => {
    // The scheduler's first key-in-memory for a computed key becomes a cancellation.
    let forged: string | null = null;
    const hooks: SimHooks = {
      schedulerMessage(_ctx, m): SchedulerMessage {
        if (forged !== null || m.to.kind !== "client" || m.msg.op !== "key-in-memory") return m;
        if (m.msg.key.startsWith("scattered")) return m;
        forged = m.msg.key;
        const msg: CancelledKeysMsg = {
          op: "cancelled-keys",
          keys: [m.msg.key],
          reason: "lost dependencies: a task it needs was lost",
          stimulusId: m.msg.stimulusId,
          submission: 0,
        };
        return { to: m.to, msg };
      },
    };
    const r = simulate({ seed: 1, workload: "scatter", tasks: 20, faults: NO_FAULTS, hooks });
    expect(forged).not.toBeNull();
    expect(r.failure?.kind).toBe("lost");
    expect(r.failure?.message).toBe(
      `wanted key ${forged} ended cancelled for the client (lost dependencies: a task it needs was lost): it needs no scattered data the run lost`,
    );
  });

  test("a scheduler that drops a scattered value's last holder while it is connected fails the run", () => {
    // A forged release-worker-data: the scheduler drops the replica, and with it the
    // key (its only one), though the worker holds it and never said otherwise.
    let forged: string | null = null;
    const hooks: SimHooks = {
      schedulerStimulus(ctx, ev): SchedulerEvent {
        if (forged !== null || ev.kind !== "worker-message" || ev.msg.op !== "heartbeat-worker")
          return ev;
        for (const ts of ctx.scheduler.tasks.values()) {
          const only = [...ts.whoHas];
          if (ts.runSpec !== null || only.length !== 1 || only[0].address !== ev.worker) continue;
          forged = ts.key;
          return {
            ...ev,
            msg: { op: "release-worker-data", key: ts.key, stimulusId: ev.msg.stimulusId },
          };
        }
        return ev;
      },
    };
    const r = simulate({ seed: 1, workload: "scatter", faults: NO_FAULTS, hooks });
    expect(forged).not.toBeNull();
    expect(r.failure?.kind).toBe("lost");
    expect(r.failure?.message).toMatch(
      new RegExp(
        `^the scheduler forgot scattered key ${forged} after release-worker-data from \\S+ \\(heartbeat-\\d+\\), which took none of its holders$`,
      ),
    );
  });
});
